package clustertest_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/broker/group"
)

// Tests required by issue 6 (consumer groups) that the other group tests
// do not cover; docs/groups.md maps every required test to its place.

// groupCluster is a one-broker cluster tuned for fast group tests: a
// small offsets topic, no initial rebalance delay, short sessions allowed.
func groupCluster(t *testing.T) *brokertest.Cluster {
	return brokertest.NewCluster(t, 1,
		brokertest.WithProperty("offsets.topic.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.replication.factor", "1"),
		brokertest.WithProperty("group.initial.rebalance.delay.ms", "0"),
		brokertest.WithProperty("group.min.session.timeout.ms", "1000"))
}

// cutDialer dials normally until cut, then closes every connection it
// made and refuses new ones: the client process has crashed as far as the
// broker can tell (no LeaveGroup, no heartbeat).
type cutDialer struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (d *cutDialer) Dial(network, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return nil, errors.New("crashed")
	}
	conn, err := net.DialTimeout(network, addr, 5*time.Second)
	if err == nil {
		d.conns = append(d.conns, conn)
	}
	return conn, err
}

func (d *cutDialer) crash() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = true
	for _, c := range d.conns {
		_ = c.Close()
	}
}

// saramaMember is one Sarama ConsumerGroup member that records the
// partitions of its current session.
type saramaMember struct {
	cg     sarama.ConsumerGroup
	dialer *cutDialer
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	claims []int32 // nil between sessions
	seen   map[string]bool
}

func (m *saramaMember) Setup(s sarama.ConsumerGroupSession) error {
	claims := []int32{}
	for _, ps := range s.Claims() {
		claims = append(claims, ps...)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = claims
	return nil
}

func (m *saramaMember) Cleanup(sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = nil
	return nil
}

func (m *saramaMember) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		m.mu.Lock()
		m.seen[string(msg.Value)] = true
		m.mu.Unlock()
		s.MarkMessage(msg, "")
	}
	return nil
}

func (m *saramaMember) consumed() map[string]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.seen)
}

func (m *saramaMember) owned() ([]int32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int32(nil), m.claims...), m.claims != nil
}

func startSaramaMember(t *testing.T, c *brokertest.Cluster, group, topic string, strategy sarama.BalanceStrategy) *saramaMember {
	t.Helper()
	m := &saramaMember{dialer: &cutDialer{}, done: make(chan struct{}), seen: map[string]bool{}}
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	g := &cfg.Consumer.Group
	g.Session.Timeout, g.Heartbeat.Interval = 3*time.Second, 300*time.Millisecond
	g.Rebalance.Timeout, g.Rebalance.Retry.Backoff = 10*time.Second, 200*time.Millisecond
	g.Rebalance.GroupStrategies = []sarama.BalanceStrategy{strategy}
	cfg.Net.Proxy.Enable, cfg.Net.Proxy.Dialer = true, m.dialer
	cg, err := sarama.NewConsumerGroup(c.Addrs(), group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cg, m.cancel = cg, cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, m); errors.Is(err, sarama.ErrClosedConsumerGroup) {
				return
			} else if err != nil {
				select { // back off before rejoining (a crashed member fails fast)
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}()
	t.Cleanup(m.stop)
	return m
}

// stop closes the member (LeaveGroup when it can reach the broker).
// Idempotent; bounded even for a crashed member.
func (m *saramaMember) stop() {
	m.cancel()
	closed := make(chan struct{})
	go func() { _ = m.cg.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second): // a crashed member's Close may retry
	}
	<-m.done
}

// waitExactlyOnce waits until the members, each in a session, together own
// every one of n partitions exactly once, each member owning some.
func waitExactlyOnce(t *testing.T, n int, members ...*saramaMember) {
	t.Helper()
	brokertest.WaitFor(t, 25*time.Second, func() error {
		owner := map[int32]int{}
		for i, m := range members {
			ps, ok := m.owned()
			if !ok || len(ps) == 0 {
				return fmt.Errorf("member %d owns nothing (in session: %v)", i, ok)
			}
			for _, p := range ps {
				if prev, dup := owner[p]; dup {
					return fmt.Errorf("partition %d owned by members %d and %d", p, prev, i)
				}
				owner[p] = i
			}
		}
		if len(owner) != n {
			return fmt.Errorf("%d of %d partitions owned: %v", len(owner), n, owner)
		}
		return nil
	})
}

// TestClusterGroupRequiredAssignors: a Sarama ConsumerGroup of 3 members
// on a 12-partition topic, with each client-side assignor (range,
// roundrobin, sticky), ends with every partition owned by exactly one
// member; when one member leaves (LeaveGroup) the other two take over all
// 12.
func TestClusterGroupRequiredAssignors(t *testing.T) {
	c := groupCluster(t)
	strategies := []sarama.BalanceStrategy{
		sarama.NewBalanceStrategyRange(), sarama.NewBalanceStrategyRoundRobin(), sarama.NewBalanceStrategySticky(),
	}
	for _, s := range strategies {
		t.Run(s.Name(), func(t *testing.T) {
			topic, group := "assign-"+s.Name(), "assign-group-"+s.Name()
			c.CreateTopic(t, topic, 12, 1)
			a := startSaramaMember(t, c, group, topic, s)
			b := startSaramaMember(t, c, group, topic, s)
			m3 := startSaramaMember(t, c, group, topic, s)
			waitExactlyOnce(t, 12, a, b, m3)
			m3.stop()
			waitExactlyOnce(t, 12, a, b)
		})
	}
}

// TestClusterGroupRequiredCrashedMember: a member that crashes (its
// connections drop, no LeaveGroup) is removed after its session timeout
// and the survivors are reassigned every partition.
func TestClusterGroupRequiredCrashedMember(t *testing.T) {
	c := groupCluster(t)
	const topic, group = "crash", "crash-group"
	c.CreateTopic(t, topic, 12, 1)
	s := sarama.NewBalanceStrategyRange()
	a := startSaramaMember(t, c, group, topic, s)
	b := startSaramaMember(t, c, group, topic, s)
	victim := startSaramaMember(t, c, group, topic, s)
	waitExactlyOnce(t, 12, a, b, victim)
	victim.dialer.crash()
	waitExactlyOnce(t, 12, a, b)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	brokertest.WaitFor(t, 10*time.Second, func() error {
		desc, err := admin.DescribeConsumerGroups([]string{group})
		if err != nil || len(desc) != 1 || desc[0].State != "Stable" || len(desc[0].Members) != 2 {
			return fmt.Errorf("describe %+v %v", desc, err)
		}
		return nil
	})
}

// TestClusterGroupRequiredOffsetFetchUnknownGroup: OffsetFetch (v1-v7)
// for a group that never existed answers offset -1 with no error, as
// Kafka does.
func TestClusterGroupRequiredOffsetFetchUnknownGroup(t *testing.T) {
	c := groupCluster(t)
	c.CreateTopic(t, "nofetch", 2, 1)
	for v := int16(1); v <= 7; v++ {
		group := fmt.Sprintf("never-existed-%d", v)
		brokertest.WaitFor(t, 20*time.Second, func() error {
			_, coord := groupCoordinator(t, c, group)
			req := &sarama.OffsetFetchRequest{Version: v, ConsumerGroup: group}
			req.AddPartition("nofetch", 1)
			resp, err := coord.FetchOffset(req)
			if err != nil {
				return err // retried: the coordinator may still be loading
			}
			if b := resp.GetBlock("nofetch", 1); !errors.Is(resp.Err, sarama.ErrNoError) || b == nil ||
				!errors.Is(b.Err, sarama.ErrNoError) || b.Offset != -1 {
				t.Fatalf("v%d: %+v (block %+v), want offset -1 and no error", v, resp, b)
			}
			return nil
		})
	}
}

// memberConn opens a connection of its own to addr (a blocking JoinGroup on
// one connection must not hold up another member's heartbeats).
func memberConn(t *testing.T, addr string) *sarama.Broker {
	t.Helper()
	b := sarama.NewBroker(addr)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Net.ReadTimeout = 30 * time.Second
	if err := b.Open(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// rawJoin sends JoinGroup v2 for a consumer subscribed to topic with the
// "range" protocol; rebalanceMs is the client's max.poll.interval.ms.
func rawJoin(b *sarama.Broker, groupID, memberID, topic string, rebalanceMs int32) (*sarama.JoinGroupResponse, error) {
	req := &sarama.JoinGroupRequest{Version: 2, GroupId: groupID, MemberId: memberID, SessionTimeout: 6000,
		RebalanceTimeout: rebalanceMs, ProtocolType: "consumer"}
	if err := req.AddGroupProtocolMetadata("range", &sarama.ConsumerGroupMemberMetadata{Topics: []string{topic}}); err != nil {
		return nil, err
	}
	return b.JoinGroup(req)
}

// rawJoinSync makes a lone member join and sync (leader, owning all of
// topic's partitions); it returns its member id and generation.
func rawJoinSync(t *testing.T, b *sarama.Broker, groupID, topic string, partitions []int32, rebalanceMs int32) (string, int32) {
	t.Helper()
	jr, err := rawJoin(b, groupID, "", topic, rebalanceMs)
	if err != nil || !errors.Is(jr.Err, sarama.ErrNoError) || jr.LeaderId != jr.MemberId {
		t.Fatalf("join = %+v %v", jr, err)
	}
	sreq := &sarama.SyncGroupRequest{Version: 1, GroupId: groupID, GenerationId: jr.GenerationId, MemberId: jr.MemberId}
	if err := sreq.AddGroupAssignmentMember(jr.MemberId, &sarama.ConsumerGroupMemberAssignment{Topics: map[string][]int32{topic: partitions}}); err != nil {
		t.Fatal(err)
	}
	sr, err := b.SyncGroup(sreq)
	if err != nil || !errors.Is(sr.Err, sarama.ErrNoError) {
		t.Fatalf("sync = %+v %v", sr, err)
	}
	return jr.MemberId, jr.GenerationId
}

// rawCommit commits offset for topic/0 as member at generation.
func rawCommit(b *sarama.Broker, groupID, member string, gen int32, topic string, offset int64) (sarama.KError, error) {
	req := &sarama.OffsetCommitRequest{Version: 2, ConsumerGroup: groupID, ConsumerGroupGeneration: gen, ConsumerID: member, RetentionTime: -1}
	req.AddBlock(topic, 0, offset, 0, "")
	resp, err := b.CommitOffset(req)
	if err != nil {
		return 0, err
	}
	return resp.Errors[topic][0], nil
}

// TestClusterGroupRequiredSlowHandlerRemoved: a member whose handler takes
// longer than max.poll.interval.ms (the JoinGroup rebalance timeout) keeps
// heartbeating (REBALANCE_IN_PROGRESS) but does not rejoin; when the
// timeout passes the join completes without it, it is no longer a member,
// and its late commit fails with a rebalance error and changes nothing.
func TestClusterGroupRequiredSlowHandlerRemoved(t *testing.T) {
	c := groupCluster(t)
	const topic, groupID = "slow", "slow-group"
	c.CreateTopic(t, topic, 2, 1)
	_, coord := groupCoordinator(t, c, groupID)
	connA, connB := memberConn(t, coord.Addr()), memberConn(t, coord.Addr())

	memberA, gen := rawJoinSync(t, connA, groupID, topic, []int32{0, 1}, 2000)
	if kerr, err := rawCommit(connA, groupID, memberA, gen, topic, 5); err != nil || !errors.Is(kerr, sarama.ErrNoError) {
		t.Fatalf("in-generation commit = %v %v", kerr, err)
	}

	type joinResult struct {
		resp *sarama.JoinGroupResponse
		err  error
	}
	joined := make(chan joinResult, 1)
	go func() { r, err := rawJoin(connB, groupID, "", topic, 2000); joined <- joinResult{r, err} }()
	// A's heartbeat thread runs on while its handler is busy.
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	sawRebalance := false
	var jb joinResult
wait:
	for {
		select {
		case jb = <-joined:
			break wait
		case <-deadline:
			t.Fatal("B's JoinGroup did not complete within 20s of a 2s rebalance timeout")
		case <-tick.C:
			hr, err := connA.Heartbeat(&sarama.HeartbeatRequest{GroupId: groupID, GenerationId: gen, MemberId: memberA})
			if err == nil && errors.Is(hr.Err, sarama.ErrRebalanceInProgress) {
				sawRebalance = true
			}
		}
	}
	if !sawRebalance {
		t.Error("A's heartbeats never answered REBALANCE_IN_PROGRESS during the rebalance")
	}
	if jb.err != nil || !errors.Is(jb.resp.Err, sarama.ErrNoError) || len(jb.resp.Members) != 1 ||
		jb.resp.Members[0].MemberId != jb.resp.MemberId || jb.resp.GenerationId != gen+1 {
		t.Fatalf("B's join = %+v %v, want B alone at generation %d", jb.resp, jb.err, gen+1)
	}
	hr, err := connA.Heartbeat(&sarama.HeartbeatRequest{GroupId: groupID, GenerationId: gen, MemberId: memberA})
	if err != nil || !errors.Is(hr.Err, sarama.ErrUnknownMemberId) {
		t.Fatalf("removed member's heartbeat = %+v %v, want UNKNOWN_MEMBER_ID", hr, err)
	}
	switch kerr, err := rawCommit(connA, groupID, memberA, gen, topic, 9); {
	case err != nil:
		t.Fatal(err)
	case kerr != sarama.ErrIllegalGeneration && kerr != sarama.ErrUnknownMemberId && kerr != sarama.ErrRebalanceInProgress:
		t.Fatalf("late commit = %v, want ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or REBALANCE_IN_PROGRESS", kerr)
	}
	req := &sarama.OffsetFetchRequest{Version: 2, ConsumerGroup: groupID}
	req.AddPartition(topic, 0)
	resp, err := connB.FetchOffset(req)
	if err != nil || resp.GetBlock(topic, 0) == nil || resp.GetBlock(topic, 0).Offset != 5 {
		t.Fatalf("offset after the refused late commit = %+v %v, want 5", resp, err)
	}
}

// TestClusterGroupRequiredOffsetsTopicDecodes: __consumer_offsets is an
// ordinary topic a Sarama consumer reads; its records are Kafka's: the
// offset commit key v1 (byte for byte, built here by hand), an offset
// commit value with the committed offset and metadata, and the group
// metadata key v2 with a value naming the generation, protocol, leader
// and member.
func TestClusterGroupRequiredOffsetsTopicDecodes(t *testing.T) {
	c := groupCluster(t)
	const topic, simpleGroup, memberGroup = "dec", "decode-simple", "decode-members"
	c.CreateTopic(t, topic, 1, 1)
	commitOffset(t, c, simpleGroup, topic, 42)
	_, coord := groupCoordinator(t, c, memberGroup)
	memberID, gen := rawJoinSync(t, memberConn(t, coord.Addr()), memberGroup, topic, []int32{0}, 5000)

	// Kafka's offset commit key v1: int16 version, string group, string
	// topic, int32 partition (strings are int16 length + bytes).
	wantKey := "\x00\x01\x00\x0d" + simpleGroup + "\x00\x03" + topic + "\x00\x00\x00\x00"

	cl := c.Sarama(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	cons, err := sarama.NewConsumerFromClient(cl)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cons.Close() }()
	var sawOffset, sawGroup bool
	for p := int32(0); p < 3; p++ {
		end, err := cl.GetOffset("__consumer_offsets", p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := cons.ConsumePartition("__consumer_offsets", p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		for next := int64(0); next < end; {
			var msg *sarama.ConsumerMessage
			select {
			case msg = <-pc.Messages():
			case err := <-pc.Errors():
				t.Fatal(err)
			case <-time.After(20 * time.Second):
				t.Fatalf("partition %d: no record at offset %d of %d", p, next, end)
			}
			next = msg.Offset + 1
			k, err := group.DecodeKey(msg.Key)
			if err != nil {
				t.Fatalf("partition %d offset %d: key %x: %v", p, msg.Offset, msg.Key, err)
			}
			switch {
			case k.IsOffset && k.Group == simpleGroup && msg.Value != nil:
				if string(msg.Key) != wantKey || k.Version != 1 {
					t.Errorf("offset key %x (v%d), want Kafka's v1 %x", msg.Key, k.Version, wantKey)
				}
				v, err := group.DecodeOffsetValue(msg.Value)
				if err != nil || v.Offset != 42 || v.Metadata != "meta-42" || v.CommitTimestamp <= 0 {
					t.Errorf("offset value %x = %+v %v", msg.Value, v, err)
				}
				sawOffset = true
			case !k.IsOffset && k.Group == memberGroup && msg.Value != nil:
				v, err := group.DecodeGroupValue(msg.Value)
				if err != nil || k.Version != 2 || v.ProtocolType != "consumer" || v.Generation != gen ||
					v.Protocol != "range" || v.Leader != memberID || len(v.Members) != 1 ||
					v.Members[0].MemberID != memberID || v.Members[0].SessionTimeoutMs != 6000 ||
					v.Members[0].RebalanceTimeoutMs != 5000 || len(v.Members[0].Assignment) == 0 {
					t.Errorf("group key v%d value %x = %+v %v", k.Version, msg.Value, v, err)
				}
				sawGroup = true
			}
		}
		_ = pc.Close()
	}
	if !sawOffset || !sawGroup {
		t.Fatalf("found offset record %v, group metadata record %v", sawOffset, sawGroup)
	}
}

// TestClusterGroupRequiredResumeAfterCoordinatorKill: a Sarama consumer
// group commits what it consumed (Close commits); the coordinator broker
// is killed (the offsets topic has RF 3); the next session resumes from
// the committed offsets: it sees every later record and none of the
// earlier ones.
func TestClusterGroupRequiredResumeAfterCoordinatorKill(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("offsets.topic.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.replication.factor", "3"),
		brokertest.WithProperty("group.initial.rebalance.delay.ms", "0"),
		brokertest.WithProperty("group.min.session.timeout.ms", "1000"))
	const topic, groupID = "resume", "resume-group"
	c.CreateTopic(t, topic, 3, 3)
	pcfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	pcfg.Producer.Partitioner, pcfg.Producer.RequiredAcks = sarama.NewManualPartitioner, sarama.WaitForAll
	prod := c.SyncProducer(t, pcfg)
	session := func() map[string]bool {
		m := startSaramaMember(t, c, groupID, topic, sarama.NewBalanceStrategyRange())
		brokertest.WaitFor(t, 25*time.Second, func() error {
			if n := len(m.consumed()); n < 30 {
				return fmt.Errorf("consumed %d of 30", n)
			}
			return nil
		})
		m.stop()
		return m.consumed()
	}
	produceN(t, prod, topic, "a", 30, 3)
	session()
	_, coord := groupCoordinator(t, c, groupID)
	c.Kill(c.Index(coord.ID()))
	produceN(t, prod, topic, "b", 30, 3)
	seen := session()
	for v := range seen {
		if v[0] != 'b' {
			t.Errorf("record %q consumed again after the coordinator moved", v)
		}
	}
	if len(seen) != 30 {
		t.Fatalf("second session consumed %d distinct records, want the 30 new ones", len(seen))
	}
}
