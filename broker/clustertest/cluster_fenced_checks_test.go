package clustertest_test

// Checks of the fenced-controller test (cluster_fenced_controller_test.go):
// a ZooKeeper monitor of who writes partition states, every broker's
// Metadata against ZooKeeper, acks=all records read back, and control
// requests carrying a stale controller epoch.

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/kafka"
	"samsa/zkutil"
)

// fencingMonitor polls ZooKeeper from the new controller's settled state
// on and records anything written with another controller epoch: a
// partition state whose zkVersion moves past the first poll's must carry
// the new controller's epoch.
type fencingMonitor struct {
	mu         sync.Mutex
	violations []string
	seen       map[string]bool
	quit, done chan struct{}
	stopOnce   sync.Once
}

// watchFencing starts polling /controller, /controller_epoch and the
// partition states every 20 ms until stop (at most 10 minutes). What it saw
// is also reported at cleanup, so a test that fails early shows it too.
func watchFencing(t *testing.T, zc *zkutil.Client, tps []kafka.TopicPartition, ctrl, epoch int32) *fencingMonitor {
	m := &fencingMonitor{seen: map[string]bool{}, quit: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() {
		vs := m.stop()
		if t.Failed() {
			for _, v := range vs {
				t.Logf("fencing monitor: %s", v)
			}
		}
	})
	go func() {
		defer close(m.done)
		deadline := time.Now().Add(10 * time.Minute)
		base := map[kafka.TopicPartition]int32{}
		for time.Now().Before(deadline) {
			if id, err := zc.GetController(); err == nil && id != ctrl {
				m.add(fmt.Sprintf("/controller names broker %d, want %d", id, ctrl))
			}
			if e, _, err := zc.GetControllerEpoch(); err == nil && e != epoch {
				m.add(fmt.Sprintf("/controller_epoch is %d, want %d", e, epoch))
			}
			if states, err := zc.GetPartitionStates(tps); err == nil {
				for tp, s := range states {
					v, ok := base[tp]
					if !ok {
						base[tp] = s.ZkVersion
						continue
					}
					if s.ZkVersion != v && s.State.ControllerEpoch != epoch {
						m.add(fmt.Sprintf("%s-%d state written with controller epoch %d (zkVersion %d, %+v), want %d",
							tp.Topic, tp.Partition, s.State.ControllerEpoch, s.ZkVersion, s.State, epoch))
					}
				}
			}
			select {
			case <-m.quit:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return m
}

func (m *fencingMonitor) add(v string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.seen[v] {
		m.seen[v] = true
		m.violations = append(m.violations, v)
	}
}

// stop ends the polling and returns what it saw; it may be called again.
func (m *fencingMonitor) stop() []string {
	m.stopOnce.Do(func() { close(m.quit) })
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.violations
}

// metadataAgrees checks that every running broker's Metadata names ctrl as
// the controller and the leaders that ZooKeeper holds, and that no
// partition is without a leader while a live ISR member exists.
func metadataAgrees(c *brokertest.ProcCluster, zc *zkutil.Client, tps []kafka.TopicPartition, ctrl int32) error {
	states, err := zc.GetPartitionStates(tps)
	if err != nil {
		return err
	}
	live, err := zc.GetBrokerIDs()
	if err != nil {
		return err
	}
	topics := map[string]bool{}
	for _, tp := range tps {
		s := states[tp].State
		if s.Leader < 0 && slices.ContainsFunc(s.ISR, func(id int32) bool { return slices.Contains(live, id) }) {
			return fmt.Errorf("%s-%d has no leader but live ISR members %v (live %v)", tp.Topic, tp.Partition, s.ISR, live)
		}
		topics[tp.Topic] = true
	}
	for i := 0; i < c.N(); i++ {
		if !c.Running(i) {
			continue
		}
		resp, err := brokerMetadata(c.Addr(i), slices.Sorted(maps.Keys(topics)))
		if err != nil {
			return fmt.Errorf("broker %d: %v", c.ID(i), err)
		}
		if resp.ControllerID != ctrl {
			return fmt.Errorf("broker %d names controller %d, want %d", c.ID(i), resp.ControllerID, ctrl)
		}
		for _, tm := range resp.Topics {
			for _, pm := range tm.Partitions {
				tp := kafka.TopicPartition{Topic: tm.Name, Partition: pm.ID}
				if want := states[tp].State.Leader; pm.Leader != want || pm.Err != sarama.ErrNoError {
					return fmt.Errorf("broker %d: %s-%d leader %d (%v), ZooKeeper %d", c.ID(i), tm.Name, pm.ID, pm.Leader, pm.Err, want)
				}
			}
		}
	}
	return nil
}

// brokerMetadata asks one broker (not the cluster) for topics' Metadata.
func brokerMetadata(addr string, topics []string) (*sarama.MetadataResponse, error) {
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Net.DialTimeout = 2 * time.Second
	cfg.Net.ReadTimeout = 5 * time.Second
	b := sarama.NewBroker(addr)
	if err := b.Open(cfg); err != nil {
		return nil, err
	}
	defer b.Close()
	return b.GetMetadata(&sarama.MetadataRequest{Version: 5, Topics: topics})
}

// produceEach writes n records "<prefix>-<p>-<i>" to every partition of
// topic with acks=all and returns what was acknowledged, by partition.
func produceEach(t *testing.T, addrs []string, topic string, partitions int32, prefix string, n int) map[int32][]ackedRecord {
	t.Helper()
	p, err := sarama.NewSyncProducer(addrs, faultProducerConfig())
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer p.Close()
	out := map[int32][]ackedRecord{}
	for part := int32(0); part < partitions; part++ {
		for i := 0; i < n; i++ {
			v := fmt.Sprintf("%s-%d-%03d", prefix, part, i)
			_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: part, Value: sarama.StringEncoder(v)})
			if err != nil {
				t.Fatalf("produce %s to %s-%d: %v", v, topic, part, err)
			}
			out[part] = append(out[part], ackedRecord{offset: off, value: v})
		}
	}
	return out
}

// checkAcked reads every partition of the acknowledged sets back and
// checks each record at its offset.
func checkAcked(t *testing.T, addrs []string, topic string, sets ...map[int32][]ackedRecord) {
	t.Helper()
	byPart := map[int32][]ackedRecord{}
	for _, s := range sets {
		for p, recs := range s {
			byPart[p] = append(byPart[p], recs...)
		}
	}
	for p, recs := range byPart {
		log := readPartition(t, addrs, topic, p)
		for _, a := range recs {
			if got, ok := log[a.offset]; !ok || got != a.value {
				t.Errorf("%s-%d: acknowledged %s at offset %d, read back %q (present %v)", topic, p, a.value, a.offset, got, ok)
			}
		}
	}
}

// expectStaleEpochRejected sends broker i LeaderAndIsr, UpdateMetadata and
// StopReplica as the old controller would (its id and epoch, the broker's
// current broker epoch) and expects STALE_CONTROLLER_EPOCH for each.
func expectStaleEpochRejected(t *testing.T, c *brokertest.ProcCluster, zc *zkutil.Client, i int, oldID, oldEpoch int32) {
	t.Helper()
	reg, err := zc.GetBroker(c.ID(i))
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.PartitionState("fenced", 0)
	if err != nil {
		t.Fatal(err)
	}
	rc := brokertest.DialRaw(t, c.Addr(i))
	lai := kmsg.NewPtrLeaderAndISRRequest()
	lai.SetVersion(5)
	lai.ControllerID, lai.ControllerEpoch, lai.BrokerEpoch = oldID, oldEpoch, reg.Epoch
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic = "fenced"
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.ControllerEpoch, ps.Leader, ps.LeaderEpoch = oldEpoch, oldID, st.LeaderEpoch+100
	ps.ISR, ps.Replicas = []int32{oldID}, []int32{c.ID(0), c.ID(1), c.ID(2)}
	ts.PartitionStates = append(ts.PartitionStates, ps)
	lai.TopicStates = append(lai.TopicStates, ts)
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.SetVersion(7)
	um.ControllerID, um.ControllerEpoch, um.BrokerEpoch = oldID, oldEpoch, reg.Epoch
	sr := kmsg.NewPtrStopReplicaRequest()
	sr.SetVersion(3)
	sr.ControllerID, sr.ControllerEpoch, sr.BrokerEpoch = oldID, oldEpoch, reg.Epoch
	for _, req := range []kmsg.Request{lai, um, sr} {
		kr, err := rc.RoundTrip(req)
		if err != nil {
			t.Fatalf("broker %d: %T: %v", c.ID(i), req, err)
		}
		var code int16
		switch r := kr.(type) {
		case *kmsg.LeaderAndISRResponse:
			code = r.ErrorCode
		case *kmsg.UpdateMetadataResponse:
			code = r.ErrorCode
		case *kmsg.StopReplicaResponse:
			code = r.ErrorCode
		}
		if code != kerr.StaleControllerEpoch.Code {
			t.Errorf("broker %d answered %T with %v, want STALE_CONTROLLER_EPOCH", c.ID(i), req, kerr.ErrorForCode(code))
		}
	}
}
