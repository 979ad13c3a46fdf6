package clustertest_test

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
	"samsa/kafka"
	"samsa/zkutil"
)

// TestClusterFencedController (issue 5): the controller's process is
// frozen (SIGSTOP) past its ZooKeeper session with work waiting for it — a
// ControlledShutdown request for another broker (the victim) in its socket
// and a topic created behind its back — while another broker wins
// /controller and bumps /controller_epoch. When it resumes (SIGCONT) it
// must not change any leadership: nothing is written to ZooKeeper with its
// epoch, the ControlledShutdown moves nothing, it resigns and rejoins as an
// ordinary broker, and the cluster converges with every partition led by a
// live ISR member. Brokers reject control requests carrying the old epoch,
// and every record acknowledged with acks=all, before, during and after, is
// read back.
//
// Two kinds of partitions meet the stale controller's elections: those of
// "fenced" (the old controller is a replica, so the new controller rewrote
// their state with its epoch; the stale one must abort on the newer epoch)
// and "fenced-pair", replicated on the victim and the third broker only,
// whose state still carries the old epoch: there only ZooKeeper's check of
// /controller_epoch's zkVersion stops the write.
func TestClusterFencedController(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3,
		brokertest.WithProperty("zookeeper.session.timeout.ms", "6000"),
		// Longer than the pause, so only controllers change ISRs while the
		// old controller is frozen (a leader's own ISR write carries the
		// partition's last controller epoch, as in Kafka).
		brokertest.WithProperty("replica.lag.time.max.ms", "30000"),
		brokertest.WithProperty("auto.leader.rebalance.enable", "false"),
		brokertest.WithProperty("controlled.shutdown.enable", "false"))
	r := &fencedRun{t: t, c: c, zc: c.ZK(), start: time.Now()}
	minISR := "2"
	c.CreateTopic(t, "fenced", 6, 3, map[string]*string{"min.insync.replicas": &minISR})
	acked := produceEach(t, c.Addrs(), "fenced", 6, "before", 10)
	k := startProducing(t, c.Addrs(), "fenced", "during", 1_000_000)
	k.waitAcks(20, 30*time.Second)
	ackedPair := r.pickBrokers()

	conn, csReq, pausedAt := r.pauseWithPendingWork()
	r.waitNewController(pausedAt)
	r.rewritten = topicPartitions(map[string]int32{"fenced": 6, "fenced-new": 3})
	r.tps = topicPartitions(map[string]int32{"fenced": 6, "fenced-new": 3, "fenced-pair": 2})
	r.waitRewritten()

	mon := watchFencing(t, r.zc, r.tps, r.newID, r.newEpoch)
	logFrom := len(c.Log(r.ci))
	c.Resume(r.ci)
	r.phase("resumed broker %d", r.oldID)
	r.checkPendingShutdown(conn, csReq)
	r.waitRejoined(logFrom)
	r.waitPreferredLeaders()

	k.waitAcks(20, 60*time.Second)
	after := produceEach(t, c.Addrs(), "fenced", 6, "after", 10)
	afterNew := produceEach(t, c.Addrs(), "fenced-new", 3, "after", 10)
	afterPair := produceEach(t, c.Addrs(), "fenced-pair", 2, "after", 10)
	k.verify(c.Addrs())
	checkAcked(t, c.Addrs(), "fenced", acked, after)
	checkAcked(t, c.Addrs(), "fenced-new", afterNew)
	checkAcked(t, c.Addrs(), "fenced-pair", ackedPair, afterPair)

	for _, v := range mon.stop() {
		t.Errorf("after the new controller's election: %s", v)
	}
	for i := 0; i < c.N(); i++ {
		expectStaleEpochRejected(t, c, r.zc, i, r.oldID, r.oldEpoch)
	}
	if err := metadataAgrees(c, r.zc, r.tps, r.newID); err != nil {
		t.Errorf("after the stale requests: %v", err)
	}
	if e, _, err := r.zc.GetControllerEpoch(); err != nil || e != r.newEpoch {
		t.Errorf("/controller_epoch %d (%v), want %d", e, err, r.newEpoch)
	}
	r.phase("done; fenced controller %d log after resume:\n%s", r.oldID, firstLines(c.Log(r.ci)[logFrom:], 40))
}

// fencedRun is TestClusterFencedController's state: the old controller
// (oldID, epoch oldEpoch, cluster index ci), the victim whose leaders the
// pending ControlledShutdown asks to move (victimLed), the new controller,
// the partitions the new controller rewrote and all of the test's.
type fencedRun struct {
	t     *testing.T
	c     *brokertest.ProcCluster
	zc    *zkutil.Client
	start time.Time

	oldID, oldEpoch int32
	ci              int
	victim          int32
	victimEpoch     int64
	victimLed       []string
	newID, newEpoch int32
	rewritten, tps  []kafka.TopicPartition
}

func (r *fencedRun) phase(format string, args ...any) {
	r.t.Logf("%6.2fs "+format, append([]any{time.Since(r.start).Seconds()}, args...)...)
}

// pickBrokers finds the controller and a victim leading "fenced"
// partitions, creates fenced-pair on the victim and the third broker (led
// by the victim) and returns the records acknowledged there.
func (r *fencedRun) pickBrokers() map[int32][]ackedRecord {
	t, c, zc := r.t, r.c, r.zc
	t.Helper()
	var err error
	if r.oldID, err = zc.GetController(); err != nil {
		t.Fatal(err)
	}
	if r.oldEpoch, _, err = zc.GetControllerEpoch(); err != nil {
		t.Fatal(err)
	}
	r.ci = c.Index(r.oldID)
	r.victim, r.victimEpoch, r.victimLed = leadingBroker(t, c, "fenced", 6, r.oldID)
	victim := r.victim
	third := c.ID(3 - r.ci - c.Index(victim))
	createAssigned(t, c.Admin(t), "fenced-pair", map[int32][]int32{0: {victim, third}, 1: {third, victim}}, nil)
	for p := int32(0); p < 2; p++ {
		c.WaitForISR(t, "fenced-pair", p, 2, 30*time.Second)
	}
	r.victimLed = append(r.victimLed, "fenced-pair-0")
	ackedPair := produceEach(t, c.Addrs(), "fenced-pair", 2, "before", 10)
	r.phase("controller %d (epoch %d); ControlledShutdown will ask it to move broker %d's leaders %v",
		r.oldID, r.oldEpoch, victim, r.victimLed)
	return ackedPair
}

// pauseWithPendingWork freezes the controller with work waiting for it: a
// ControlledShutdown for the victim written to its socket (connected
// before the pause, so the request waits there for the resume) and a topic
// created in ZooKeeper behind its back.
func (r *fencedRun) pauseWithPendingWork() (net.Conn, *kmsg.ControlledShutdownRequest, time.Time) {
	t, c, zc := r.t, r.c, r.zc
	t.Helper()
	conn, err := net.DialTimeout("tcp", c.Addr(r.ci), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	pausedAt := time.Now()
	c.Pause(r.ci) // returns once the process is frozen
	csReq := kmsg.NewPtrControlledShutdownRequest()
	csReq.SetVersion(3)
	csReq.BrokerID, csReq.BrokerEpoch = r.victim, r.victimEpoch
	clientID := "fenced-test"
	if _, err := conn.Write(wire.AppendRequest(nil, csReq, 1, &clientID)); err != nil {
		t.Fatal(err)
	}
	// A topic created in ZooKeeper fires the frozen controller's watch.
	assignment := map[int32][]int32{}
	for p := int32(0); p < 3; p++ {
		assignment[p] = []int32{c.ID(int(p) % 3), c.ID(int(p+1) % 3), c.ID(int(p+2) % 3)}
	}
	if err := zc.CreateTopic("fenced-new", assignment, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(pausedAt); d > 3*time.Second {
		t.Fatalf("the pending work took %v, too close to the 6 s session timeout", d)
	}
	return conn, csReq, pausedAt
}

// waitNewController waits for another broker to win /controller with a
// newer /controller_epoch.
func (r *fencedRun) waitNewController(pausedAt time.Time) {
	t, zc, oldID, oldEpoch := r.t, r.zc, r.oldID, r.oldEpoch
	t.Helper()
	var newID, newEpoch int32
	brokertest.WaitFor(t, 60*time.Second, func() error {
		id, err := zc.GetController()
		if err != nil {
			return err
		}
		e, _, err := zc.GetControllerEpoch()
		if err != nil {
			return err
		}
		if id < 0 || id == oldID || e <= oldEpoch {
			return fmt.Errorf("/controller %d, /controller_epoch %d (old controller %d, epoch %d)", id, e, oldID, oldEpoch)
		}
		newID, newEpoch = id, e
		return nil
	})
	r.phase("broker %d is the controller with epoch %d (paused %.1fs ago)", newID, newEpoch, time.Since(pausedAt).Seconds())
	r.newID, r.newEpoch = newID, newEpoch
}

// waitRewritten waits until the new controller has rewritten the state of
// every partition the old controller was a replica of: its broker is gone.
func (r *fencedRun) waitRewritten() {
	t, zc, tps, rewritten, oldID, newEpoch := r.t, r.zc, r.tps, r.rewritten, r.oldID, r.newEpoch
	t.Helper()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		states, err := zc.GetPartitionStates(tps)
		if err != nil {
			return err
		}
		for _, tp := range rewritten {
			s, ok := states[tp]
			if !ok {
				return fmt.Errorf("%s-%d: no state", tp.Topic, tp.Partition)
			}
			if s.State.ControllerEpoch != newEpoch || s.State.Leader < 0 || s.State.Leader == oldID ||
				slices.Contains(s.State.ISR, oldID) {
				return fmt.Errorf("%s-%d: %+v, want epoch %d, a leader and no broker %d", tp.Topic, tp.Partition, s.State, newEpoch, oldID)
			}
		}
		return nil
	})
	r.phase("every partition state written by epoch %d without broker %d", newEpoch, oldID)
}

// checkPendingShutdown: the pending ControlledShutdown must not be carried
// out: either NOT_CONTROLLER (the fenced write failed, or the controller
// had already resigned), or no error with the victim still leading all it
// led (Kafka's answer when every election aborted on a newer epoch).
func (r *fencedRun) checkPendingShutdown(conn net.Conn, csReq *kmsg.ControlledShutdownRequest) {
	t, victim, victimLed := r.t, r.victim, r.victimLed
	t.Helper()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if frame, err := wire.ReadFrame(conn, 1<<20, nil); err != nil {
		t.Logf("pending ControlledShutdown: connection ended: %v", err)
	} else if kr, err := wire.ParseResponse(frame, csReq, 1); err != nil {
		t.Fatal(err)
	} else {
		resp := kr.(*kmsg.ControlledShutdownResponse)
		var remaining []string
		for _, p := range resp.PartitionsRemaining {
			remaining = append(remaining, fmt.Sprintf("%s-%d", p.Topic, p.Partition))
		}
		r.phase("pending ControlledShutdown answered %v, remaining %v (broker %d led %v)",
			kerr.ErrorForCode(resp.ErrorCode), remaining, victim, victimLed)
		switch {
		case resp.ErrorCode == kerr.NotController.Code:
		case resp.ErrorCode != 0:
			t.Errorf("the fenced controller answered ControlledShutdown with %v, want NOT_CONTROLLER", kerr.ErrorForCode(resp.ErrorCode))
		default:
			for _, tp := range victimLed {
				if !slices.Contains(remaining, tp) {
					t.Errorf("the fenced controller reports %s moved away from broker %d", tp, victim)
				}
			}
		}
	}
}

// waitRejoined: the old controller resigns and rejoins as an ordinary
// broker, back in every ISR.
func (r *fencedRun) waitRejoined(logFrom int) {
	t, c, zc, tps, oldID, newID, ci, victim := r.t, r.c, r.zc, r.tps, r.oldID, r.newID, r.ci, r.victim
	t.Helper()
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if !strings.Contains(c.Log(ci)[logFrom:], "resigned as the controller") {
			return fmt.Errorf("broker %d has not logged its resignation", oldID)
		}
		if _, err := zc.GetBroker(oldID); err != nil {
			return fmt.Errorf("broker %d not registered again: %v", oldID, err)
		}
		return metadataAgrees(c, zc, tps, newID)
	})
	r.phase("broker %d resigned, registered again and every broker agrees with ZooKeeper", oldID)
	for _, tp := range r.rewritten {
		c.WaitForISR(t, tp.Topic, tp.Partition, 3, 60*time.Second)
	}
	r.phase("broker %d is back in every ISR", oldID)
	if st, err := c.PartitionState("fenced-pair", 0); err != nil || st.Leader != victim || len(st.ISR) != 2 {
		t.Errorf("fenced-pair-0: %+v (%v), want led by broker %d with both replicas in sync", st, err, victim)
	}
}

// waitPreferredLeaders: the old controller serves its partitions as leader
// again after a preferred election run by the new controller.
func (r *fencedRun) waitPreferredLeaders() {
	t, c, zc, tps, rewritten, oldID, newID := r.t, r.c, r.zc, r.tps, r.rewritten, r.oldID, r.newID
	t.Helper()
	admin := c.Admin(t)
	if _, err := admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{
		"fenced": {0, 1, 2, 3, 4, 5}, "fenced-new": {0, 1, 2}}); err != nil {
		t.Fatalf("preferred election: %v", err)
	}
	led := 0
	brokertest.WaitFor(t, 30*time.Second, func() error {
		led = 0
		states, err := zc.GetPartitionStates(tps)
		if err != nil {
			return err
		}
		for _, tp := range rewritten {
			a, _, err := zc.GetTopicAssignment(tp.Topic)
			if err != nil {
				return err
			}
			want := a.Partitions[tp.Partition][0]
			if l := states[tp].State.Leader; l != want {
				return fmt.Errorf("%s-%d led by %d, preferred %d", tp.Topic, tp.Partition, l, want)
			}
			if want == oldID {
				led++
			}
		}
		return metadataAgrees(c, zc, tps, newID)
	})
	if led == 0 {
		t.Fatalf("broker %d leads no partition after the preferred election", oldID)
	}
	r.phase("broker %d leads %d partitions again", oldID, led)
}

// leadingBroker returns a broker other than except that leads at least one
// partition of topic, its broker epoch and the partitions it leads.
func leadingBroker(t *testing.T, c *brokertest.ProcCluster, topic string, n int32, except int32) (int32, int64, []string) {
	t.Helper()
	leaders := map[int32][]string{}
	for p := int32(0); p < n; p++ {
		s, err := c.PartitionState(topic, p)
		if err != nil {
			t.Fatal(err)
		}
		leaders[s.Leader] = append(leaders[s.Leader], fmt.Sprintf("%s-%d", topic, p))
	}
	for i := 0; i < c.N(); i++ {
		if id := c.ID(i); id != except && len(leaders[id]) > 0 {
			b, err := c.ZK().GetBroker(id)
			if err != nil {
				t.Fatal(err)
			}
			return id, b.Epoch, leaders[id]
		}
	}
	t.Fatalf("no broker but %d leads a partition of %s: %v", except, topic, leaders)
	return 0, 0, nil
}

func topicPartitions(topics map[string]int32) []kafka.TopicPartition {
	var out []kafka.TopicPartition
	for topic, n := range topics {
		for p := int32(0); p < n; p++ {
			out = append(out, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	slices.SortFunc(out, func(a, b kafka.TopicPartition) int {
		return strings.Compare(fmt.Sprintf("%s-%03d", a.Topic, a.Partition), fmt.Sprintf("%s-%03d", b.Topic, b.Partition))
	})
	return out
}

// firstLines returns up to n lines of a broker log, for the test log.
func firstLines(log string, n int) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
