package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/kafka"
)

// epochFetch is a v12 consumer fetch of topic-partition 0 at offset with
// current_leader_epoch epoch, in session id at sessionEpoch (named: the
// partition is in the request), parking up to wait for one byte.
func epochFetch(topic string, offset int64, epoch, id, sessionEpoch int32, named bool, wait time.Duration) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MinBytes, req.MaxBytes = 12, -1, 1, 1<<20
	req.MaxWaitMillis = int32(wait / time.Millisecond)
	req.SessionID, req.SessionEpoch = id, sessionEpoch
	if named {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 0, offset, 1<<20, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// goFetch sends req on rc and delivers the answer (nil on error).
func goFetch(t *testing.T, rc *brokertest.RawConn, req *kmsg.FetchRequest) <-chan *kmsg.FetchResponse {
	out := make(chan *kmsg.FetchResponse, 1)
	go func() {
		resp, err := rc.RoundTrip(req)
		if err != nil {
			t.Errorf("fetch: %v", err)
			out <- nil
			return
		}
		out <- resp.(*kmsg.FetchResponse)
	}()
	return out
}

// TestAPIFetchParkedAcrossLeaderChange: fetches parked on a leader (a
// sessionless one, checked by the purgatory's offset comparison, and a
// changed-only incremental one, parked on its session) while it loses the
// leadership (reassignment and preferred election): the LeaderAndIsr that
// makes it a follower wakes both, and they answer the partition's error
// (FENCED_LEADER_EPOCH or NOT_LEADER_OR_FOLLOWER) at once, not at the end
// of their wait. The incremental one names the partition, so the session
// read it on arrival and must read it again on the change. Then acks=all writes are
// acknowledged by the new leader, with the old one following again.
func TestAPIFetchParkedAcrossLeaderChange(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	const topic = "plc"
	c.CreateTopic(t, topic, 1, 3)
	leader := c.WaitForLeader(t, topic, 0)
	c.WaitForISR(t, topic, 0, 3)
	li := c.Index(leader)
	tp := kafka.TopicPartition{Topic: topic, Partition: 0}
	st := c.Broker(li).Replicas().Partition(tp).State()
	rc, src := brokertest.DialRaw(t, c.Addr(li)), brokertest.DialRaw(t, c.Addr(li))

	full, err := src.RoundTrip(epochFetch(topic, st.HighWatermark, st.LeaderEpoch, 0, 0, true, 0))
	if err != nil {
		t.Fatal(err)
	}
	id := full.(*kmsg.FetchResponse).SessionID
	if id == 0 {
		t.Fatal("no fetch session")
	}
	// The first incremental fetch examines the whole new session; the
	// second parks on the session.
	if _, err := src.RoundTrip(epochFetch(topic, 0, 0, id, 1, false, 0)); err != nil {
		t.Fatal(err)
	}
	// 18 s: under brokertest.RawConn's 20 s deadline. A fetch that is not
	// woken answers at its deadline, which the checks below tell apart.
	const wait = 18 * time.Second
	sent := time.Now()
	// It names the partition again (same values), so the partition is read
	// when the fetch arrives and then must be read again when it changes.
	incremental := goFetch(t, src, epochFetch(topic, st.HighWatermark, st.LeaderEpoch, id, 2, true, wait))
	sessionless := goFetch(t, rc, epochFetch(topic, st.HighWatermark, st.LeaderEpoch, 0, -1, true, wait))
	// The sessionless fetch is the only one parked on the partition's key
	// (the followers' and the incremental fetch park on their sessions).
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if n := c.Broker(li).Replicas().Fetch.Watched(tp); n != 1 {
			return fmt.Errorf("%d fetches parked on %v, want 1", n, tp)
		}
		return nil
	})

	moved := moveLeadership(t, c, topic, li)
	for name, ch := range map[string]<-chan *kmsg.FetchResponse{"sessionless": sessionless, "incremental": incremental} {
		select {
		case r := <-ch:
			if r == nil || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
				for i := 0; i < c.N(); i++ {
					t.Logf("broker %d: %+v", c.Broker(i).ID(), c.Broker(i).Replicas().Partition(tp).State())
				}
				t.Fatalf("%s: answered %+v, want partition 0 with an error", name, r)
			}
			code := r.Topics[0].Partitions[0].ErrorCode
			t.Logf("%s: answered %v %v after the reassignment", name, kerr.ErrorForCode(code), time.Since(moved))
			if code != kerr.FencedLeaderEpoch.Code && code != kerr.NotLeaderForPartition.Code {
				t.Fatalf("%s: error %v, want FENCED_LEADER_EPOCH or NOT_LEADER_OR_FOLLOWER", name, kerr.ErrorForCode(code))
			}
		case <-time.After(time.Until(sent.Add(wait - 5*time.Second))):
			t.Fatalf("%s: the parked fetch was not woken by the leadership change (still parked %v after it was sent; it waits %v)",
				name, time.Since(sent), wait)
		}
	}

	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 30
	cfg.Producer.Retry.Backoff = 200 * time.Millisecond
	p := c.SyncProducer(t, cfg)
	for i := 0; i < 10; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatalf("acks=all after the leader change: %v", err)
		}
	}
	c.WaitForISR(t, topic, 0, 3)
}

// moveLeadership makes another replica lead topic-partition 0 (the same
// replicas with another one first, then a preferred election), so that
// broker li gets a LeaderAndIsr making it a follower at a later leader
// epoch while its connections stay open. It returns when li no longer
// leads, with the time the reassignment was accepted.
func moveLeadership(t *testing.T, c *brokertest.Cluster, topic string, li int) time.Time {
	t.Helper()
	tp := kafka.TopicPartition{Topic: topic, Partition: 0}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	next := (li + 1) % c.N()
	order := []int32{c.Broker(next).ID()}
	for i := 0; i < c.N(); i++ {
		if i != next {
			order = append(order, c.Broker(i).ID())
		}
	}
	if err := admin.AlterPartitionReassignments(topic, [][]int32{order}); err != nil {
		t.Fatalf("reassign %v: %v", order, err)
	}
	moved := time.Now()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		res, err := admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{topic: {0}})
		if err != nil {
			return err
		}
		if r := res[topic][0]; r == nil || (r.ErrorCode != 0 && r.ErrorCode != sarama.ErrElectionNotNeeded) {
			return fmt.Errorf("preferred election: %+v", r)
		}
		if st := c.Broker(li).Replicas().Partition(tp).State(); st.IsLeader {
			return fmt.Errorf("broker %d still leads", c.Broker(li).ID())
		}
		return nil
	})
	return moved
}
