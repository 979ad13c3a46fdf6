package clustertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker"
	"samsa/broker/brokertest"
)

// rawGroup speaks the group protocol with raw kmsg requests through one
// franz-go client (it routes group requests to the coordinator).
type rawGroup struct {
	t     *testing.T
	cl    *kgo.Client
	group string
}

func newRawGroup(t *testing.T, c *brokertest.Cluster, group string) *rawGroup {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ClientID("raw-member"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &rawGroup{t: t, cl: cl, group: group}
}

func (g *rawGroup) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// join runs the KIP-394 two-step JoinGroup v5 (rebalance timeout 3 s,
// session 6 s) for instance ("" for a dynamic member).
func (g *rawGroup) join(instance string) *kmsg.JoinGroupResponse {
	ctx, cancel := g.ctx()
	defer cancel()
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 5
	req.Group, req.ProtocolType = g.group, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 6000, 3000
	if instance != "" {
		req.InstanceID = kmsg.StringPtr(instance)
	}
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 1, 0, 2, 'p', 's', 0, 0, 0, 0}
	req.Protocols = append(req.Protocols, p)
	for i := 0; i < 3; i++ {
		resp, err := req.RequestWith(ctx, g.cl)
		if err != nil {
			g.t.Error(err)
			return nil
		}
		if resp.ErrorCode == kerr.MemberIDRequired.Code {
			req.MemberID = resp.MemberID
			continue
		}
		return resp
	}
	g.t.Error("JoinGroup kept answering MEMBER_ID_REQUIRED")
	return nil
}

func (g *rawGroup) sync(gen int32, member, instance string, assign map[string][]byte) int16 {
	ctx, cancel := g.ctx()
	defer cancel()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 3
	req.Group, req.Generation, req.MemberID = g.group, gen, member
	if instance != "" {
		req.InstanceID = kmsg.StringPtr(instance)
	}
	for id, a := range assign {
		x := kmsg.NewSyncGroupRequestGroupAssignment()
		x.MemberID, x.MemberAssignment = id, a
		req.GroupAssignment = append(req.GroupAssignment, x)
	}
	resp, err := req.RequestWith(ctx, g.cl)
	if err != nil {
		g.t.Fatal(err)
	}
	return resp.ErrorCode
}

func (g *rawGroup) heartbeat(gen int32, member, instance string) int16 {
	ctx, cancel := g.ctx()
	defer cancel()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 3
	req.Group, req.Generation, req.MemberID = g.group, gen, member
	if instance != "" {
		req.InstanceID = kmsg.StringPtr(instance)
	}
	resp, err := req.RequestWith(ctx, g.cl)
	if err != nil {
		g.t.Fatal(err)
	}
	return resp.ErrorCode
}

func (g *rawGroup) describe() kmsg.DescribeGroupsResponseGroup {
	ctx, cancel := g.ctx()
	defer cancel()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{g.group}
	resp, err := req.RequestWith(ctx, g.cl)
	if err != nil || len(resp.Groups) != 1 {
		g.t.Fatalf("describe: %v %+v", err, resp)
	}
	return resp.Groups[0]
}

// joinPair has two members (instances a and b, "" for dynamic) join
// together, the second through other (a broker serves one request per
// connection at a time, as Kafka does, so a parked JoinGroup holds its
// connection), and returns their answers, leader first.
func (g *rawGroup) joinPair(other *rawGroup, a, b string) (*kmsg.JoinGroupResponse, *kmsg.JoinGroupResponse) {
	ch := make(chan *kmsg.JoinGroupResponse, 2)
	go func() { ch <- g.join(a) }()
	go func() { ch <- other.join(b) }()
	r1, r2 := <-ch, <-ch
	if r1 == nil || r2 == nil || r1.ErrorCode != 0 || r2.ErrorCode != 0 {
		g.t.Fatalf("joins: %+v / %+v", r1, r2)
	}
	if r2.LeaderID == r2.MemberID {
		r1, r2 = r2, r1
	}
	return r1, r2
}

// fetchRebalances reads broker i's GroupRebalancesPath for group.
func fetchRebalances(c *brokertest.Cluster, i int, group string) (broker.RebalancesDoc, error) {
	var doc broker.RebalancesDoc
	addr := c.Broker(i).Addr(broker.MetricsListenerName)
	if addr == nil {
		return doc, fmt.Errorf("broker %d has no metrics listener", i)
	}
	resp, err := http.Get("http://" + addr.String() + broker.GroupRebalancesPath + "?group=" + group)
	if err != nil {
		return doc, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return doc, err
	}
	return doc, json.Unmarshal(body, &doc)
}

// TestClusterGroupPendingSyncRemoved (KAFKA-12890): a member that joins
// and never sends SyncGroup is removed once the rebalance timeout (3 s)
// passed after the join completed, although it heartbeats and the leader
// synced; the group rebalances with the reason pending_sync_expired
// (counted on the metrics endpoint), and the removed member's Heartbeat
// and SyncGroup get UNKNOWN_MEMBER_ID. The same holds for a static member.
func TestClusterGroupPendingSyncRemoved(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "1"),
		brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"),
		// Both members land in generation 1 (the harness default is 0).
		brokertest.WithProperty("group.initial.rebalance.delay.ms", "1500"))
	for _, tc := range []struct{ name, leaderInst, silentInst string }{
		{"dynamic", "", ""},
		{"static", "inst-leader", "inst-silent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			group := "pending-sync-" + tc.name
			g := newRawGroup(t, c, group)
			leader, silent := g.joinPair(newRawGroup(t, c, group), tc.leaderInst, tc.silentInst)
			if leader.LeaderID != leader.MemberID || leader.Generation != 1 {
				t.Fatalf("leader join: %+v", leader)
			}
			// Which instance id goes with which member depends on who led.
			li, si := tc.leaderInst, tc.silentInst
			for _, m := range leader.Members {
				if m.MemberID == leader.MemberID && m.InstanceID != nil {
					li = *m.InstanceID
				}
				if m.MemberID == silent.MemberID && m.InstanceID != nil {
					si = *m.InstanceID
				}
			}
			joined := time.Now()
			if code := g.sync(leader.Generation, leader.MemberID, li,
				map[string][]byte{leader.MemberID: {0, 0}, silent.MemberID: {0, 0}}); code != 0 {
				t.Fatalf("leader sync = %v", kerr.ErrorForCode(code))
			}
			// The silent member heartbeats, which does not count as a sync.
			if code := g.heartbeat(silent.Generation, silent.MemberID, si); code != 0 {
				t.Fatalf("silent heartbeat = %v", kerr.ErrorForCode(code))
			}
			brokertest.WaitFor(t, 20*time.Second, func() error {
				d := g.describe()
				if d.State != "PreparingRebalance" || len(d.Members) != 1 || d.Members[0].MemberID != leader.MemberID {
					return fmt.Errorf("group %s with %d members", d.State, len(d.Members))
				}
				return nil
			})
			if e := time.Since(joined); e < 3*time.Second {
				t.Fatalf("removed after %v, before the 3 s rebalance timeout", e)
			}
			if code := g.heartbeat(silent.Generation, silent.MemberID, si); code != kerr.UnknownMemberID.Code {
				t.Fatalf("removed member heartbeat = %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(code))
			}
			if code := g.sync(silent.Generation, silent.MemberID, si, nil); code != kerr.UnknownMemberID.Code {
				t.Fatalf("removed member sync = %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(code))
			}
			sample := checkPendingSyncRecorded(t, c, group, silent.MemberID, si)
			// Once the group is deleted its series go (no pile-up of ids).
			g.leaveAndDelete(leader.MemberID, li)
			brokertest.WaitFor(t, 20*time.Second, func() error {
				if _, err := brokertest.ScrapeValue(c, 0, sample); err == nil {
					return fmt.Errorf("%s still exported after DeleteGroups", sample)
				}
				return nil
			})
		})
	}
}

// checkPendingSyncRecorded: the group's last rebalance is the removal of
// silentID (instance si) on pending sync expiration, and the rebalance
// counters by reason count it and the first join; it returns the
// pending_sync_expired sample's name.
func checkPendingSyncRecorded(t *testing.T, c *brokertest.Cluster, group, silentID, si string) string {
	t.Helper()
	doc, err := fetchRebalances(c, 0, group)
	if err != nil || len(doc.Groups) != 1 {
		t.Fatalf("rebalances: %+v %v", doc, err)
	}
	rs := doc.Groups[0].Rebalances
	last := rs[len(rs)-1]
	want := "Removing Set(" + silentID + ") on pending sync request expiration"
	if last.Reason != "pending_sync_expired" || last.Detail != want || last.MemberID != silentID ||
		last.ClientID != "raw-member" || last.Generation != 1 || last.GroupInstanceID != si {
		t.Fatalf("last rebalance = %+v, want %q", last, want)
	}
	sample := `kafka_coordinator_group_groupcoordinator_rebalancecount_total{group="` + group + `",reason="pending_sync_expired"}`
	if v, err := brokertest.ScrapeValue(c, 0, sample); err != nil || v != 1 {
		t.Fatalf("%s = %v, %v", sample, v, err)
	}
	if v, err := brokertest.ScrapeValue(c, 0, strings.Replace(sample, "pending_sync_expired", "member_joined", 1)); err != nil || v != 1 {
		t.Fatalf("member_joined count = %v, %v", v, err)
	}
	return sample
}

// leaveAndDelete has the group's last member (leaderID, instance li)
// leave, then deletes the group.
func (g *rawGroup) leaveAndDelete(leaderID, li string) {
	g.t.Helper()
	group := g.group
	ctx, cancel := g.ctx()
	defer cancel()
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version = 3
	leave.Group = group
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = leaderID
	if li != "" {
		lm.InstanceID = kmsg.StringPtr(li)
	}
	leave.Members = append(leave.Members, lm)
	if r, err := leave.RequestWith(ctx, g.cl); err != nil || r.ErrorCode != 0 || r.Members[0].ErrorCode != 0 {
		g.t.Fatalf("leave: %+v %v", r, err)
	}
	brokertest.WaitFor(g.t, 20*time.Second, func() error {
		del := kmsg.NewPtrDeleteGroupsRequest()
		del.Groups = []string{group}
		r, err := del.RequestWith(ctx, g.cl)
		if err != nil || len(r.Groups) != 1 || r.Groups[0].ErrorCode != 0 {
			return fmt.Errorf("delete groups: %+v %v", r, err)
		}
		return nil
	})
}
