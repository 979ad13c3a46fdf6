package replica

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"samsa/broker/storage"
	"samsa/kafka"
)

// managerLogs adapts a real storage.Manager to LogProvider, as the broker
// does.
type managerLogs struct{ m *storage.Manager }

func (p managerLogs) GetOrCreateLog(tp kafka.TopicPartition, cfg storage.Config, _ bool) (*storage.Log, error) {
	return p.m.GetOrCreateLog(tp, cfg)
}

func (p managerLogs) DeleteLog(tp kafka.TopicPartition) error {
	return p.m.DeleteLog(tp)
}

// offlineRig is a replica Manager (broker 1, min.insync.replicas 1) over a
// storage.Manager with dirs log dirs, whose OnDirOffline hook calls
// HandleLogDirFailure from a goroutine of its own, as the broker does, and
// reports each call's result on offlined.
type offlineRig struct {
	m        *Manager
	logs     *storage.Manager
	dirs     []string
	offlined chan []kafka.TopicPartition
}

func newOfflineRig(t *testing.T, ndirs int, segmentBytes int32) *offlineRig {
	t.Helper()
	r := &offlineRig{offlined: make(chan []kafka.TopicPartition, 4)}
	for i := 0; i < ndirs; i++ {
		r.dirs = append(r.dirs, t.TempDir())
	}
	cfg := storage.DefaultConfig()
	cfg.SegmentBytes = segmentBytes
	logs, err := storage.NewManager(storage.ManagerConfig{Dirs: r.dirs, LogConfig: cfg,
		OnDirOffline: func(dir string, _ error, _ int) {
			go func() { r.offlined <- r.m.HandleLogDirFailure(dir) }()
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := logs.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.logs = logs
	r.m, err = New(Config{BrokerID: 1, Logs: managerLogs{logs}, TopicConfig: func(string) (TopicConfig, error) {
		return TopicConfig{Log: cfg, MinInsyncReplicas: 1}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.m.Close(); _ = logs.Close() })
	return r
}

// state is one LeaderAndIsr partition state for broker 1's rig.
func state(tp kafka.TopicPartition, leader, epoch int32, isr, replicas []int32) PartitionState {
	return PartitionState{TopicPartition: tp, ControllerEpoch: 1, Leader: leader, LeaderEpoch: epoch,
		ISR: isr, Replicas: replicas}
}

func (r *offlineRig) leaderAndIsr(t *testing.T, states ...PartitionState) map[kafka.TopicPartition]error {
	t.Helper()
	res, err := r.m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1, Partitions: states})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// rootOf returns the log dir holding tp's log.
func (r *offlineRig) rootOf(t *testing.T, tp kafka.TopicPartition) string {
	t.Helper()
	p := r.m.Partition(tp)
	if p == nil || p.Log() == nil {
		t.Fatalf("%s has no log", tp)
	}
	return filepath.Dir(p.Log().Dir())
}

// failDir makes the next roll of tp's log fail for real (its directory is
// gone), appends until it does, and returns what HandleLogDirFailure took
// offline.
func (r *offlineRig) failDir(t *testing.T, tp kafka.TopicPartition) []kafka.TopicPartition {
	t.Helper()
	if err := os.RemoveAll(r.m.Partition(tp).Log().Dir()); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		_, err = r.m.AppendAsLeader(tp, batch(t, "filler-to-roll-the-segment"), 1)
	}
	if !errors.Is(err, storage.ErrStorage) {
		t.Fatalf("append after the partition dir vanished: %v", err)
	}
	select {
	case tps := <-r.offlined:
		return tps
	case <-time.After(10 * time.Second):
		t.Fatal("HandleLogDirFailure not called")
		return nil
	}
}

// TestReplicaLogDirFailureTakesItsPartitionsOffline: a real disk error in
// one of two log dirs takes exactly the partitions whose logs are there
// offline (led and followed alike): every request on them answers
// ErrOffline (KAFKA_STORAGE_ERROR), a parked acks=all produce answers at
// once, LeaderAndIsr and StopReplica leave them alone, while partitions in
// the healthy dir and new ones keep working.
func TestReplicaLogDirFailureTakesItsPartitionsOffline(t *testing.T) {
	r := newOfflineRig(t, 2, 200)
	want, healthy, failed := placeOfflineTestPartitions(t, r)
	a0, a1, w0 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1}, kafka.TopicPartition{Topic: "w", Partition: 0}
	for _, tp := range []kafka.TopicPartition{a0, a1} {
		if _, err := r.m.AppendAsLeader(tp, batch(t, "x"), 1); err != nil {
			t.Fatal(err)
		}
	}
	// An acks=all produce parked on w-0 (follower 2 never fetches).
	wres, err := r.m.AppendAsLeader(w0, batch(t, "parked"), -1)
	if err != nil {
		t.Fatal(err)
	}
	parked := make(chan error, 1)
	go func() {
		parked <- r.m.WaitReplicated(context.Background(), w0, wres.LastOffset+1, time.Now().Add(time.Minute))
	}()

	got := r.failDir(t, a0)
	if !slices.Equal(got, want) || !slices.Equal(r.m.OfflinePartitions(), want) {
		t.Fatalf("offline %v (list %v), want %v", got, r.m.OfflinePartitions(), want)
	}
	select {
	case err := <-parked:
		if !errors.Is(err, ErrOffline) {
			t.Fatalf("parked produce: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("parked produce not answered")
	}
	checkOfflinePartitionCalls(t, r, want)
	checkHealthyPartitionsServed(t, r, healthy)
	n0 := checkLeaderAndIsrAfterDirFailure(t, r, want, failed)
	checkStopReplicaAfterDirFailure(t, r, want, n0)
}

// placeOfflineTestPartitions leads a-0, a-1 and w-0 (followed by broker 2)
// and follows f-0 and f-1 on the rig's two dirs. It returns the partitions
// in a-0's dir (a-0, f-1, w-0, sorted), the others (a-1, f-0) and a-0's dir.
func placeOfflineTestPartitions(t *testing.T, r *offlineRig) ([]kafka.TopicPartition, []kafka.TopicPartition, string) {
	a0, a1 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1}
	f0, f1, w0 := kafka.TopicPartition{Topic: "f", Partition: 0}, kafka.TopicPartition{Topic: "f", Partition: 1}, kafka.TopicPartition{Topic: "w", Partition: 0}
	// New logs go to the dir with the fewest, config order breaking ties:
	// a-0, w-0 and f-1 share a dir, a-1 and f-0 the other.
	all := []kafka.TopicPartition{a0, a1, w0, f0, f1}
	res := r.leaderAndIsr(t, state(a0, 1, 0, []int32{1}, []int32{1}), state(a1, 1, 0, []int32{1}, []int32{1}),
		state(w0, 1, 0, []int32{1, 2}, []int32{1, 2}),
		state(f0, 2, 0, []int32{2, 1}, []int32{2, 1}), state(f1, 2, 0, []int32{2, 1}, []int32{2, 1}))
	for tp, err := range res {
		if err != nil {
			t.Fatalf("%s: %v", tp, err)
		}
	}
	failed := r.rootOf(t, a0)
	var want, healthy []kafka.TopicPartition
	for _, tp := range all {
		if r.rootOf(t, tp) == failed {
			want = append(want, tp)
		} else {
			healthy = append(healthy, tp)
		}
	}
	if !slices.Equal(want, []kafka.TopicPartition{a0, w0, f1}) {
		t.Fatalf("placement: failed dir %v, healthy %v", want, healthy)
	}
	kafka.SortPartitions(want)
	return want, healthy, failed
}

// checkOfflinePartitionCalls checks that every call on an offline
// partition answers ErrOffline, which is a storage error.
func checkOfflinePartitionCalls(t *testing.T, r *offlineRig, want []kafka.TopicPartition) {
	for _, tp := range want {
		if !r.m.IsOffline(tp) || r.m.Partition(tp) != nil {
			t.Fatalf("%s: offline %v, partition %v", tp, r.m.IsOffline(tp), r.m.Partition(tp))
		}
		checks := map[string]error{}
		_, checks["append"] = r.m.AppendAsLeader(tp, batch(t, "y"), 1)
		_, checks["read"] = r.m.Read(tp, ReadParams{ReplicaID: ConsumerReplicaID, MaxBytes: 1 << 10, CurrentLeaderEpoch: -1})
		_, checks["follower read"] = r.m.Read(tp, ReadParams{ReplicaID: 2, MaxBytes: 1 << 10, CurrentLeaderEpoch: -1})
		_, checks["list offsets"] = r.m.ListOffset(tp, storage.LatestTimestamp, ConsumerReplicaID, -1, false)
		_, checks["legacy offsets"] = r.m.LegacyOffsets(tp, storage.LatestTimestamp, 1, ConsumerReplicaID)
		_, checks["epoch end"] = r.m.EndOffsetForEpoch(tp, 0, -1, 2)
		_, checks["delete records"] = r.m.DeleteRecords(tp, 0)
		_, checks["read local"] = r.m.ReadLocal(tp, 0, 1<<10)
		checks["wait replicated"] = r.m.WaitReplicated(context.Background(), tp, 1, time.Now().Add(time.Second))
		for what, err := range checks {
			if !errors.Is(err, ErrOffline) || !errors.Is(err, storage.ErrStorage) {
				t.Errorf("%s %s: %v", tp, what, err)
			}
		}
	}
}

// checkHealthyPartitionsServed checks that the partitions of the healthy
// dir stay online, and those it leads still take appends and reads.
func checkHealthyPartitionsServed(t *testing.T, r *offlineRig, healthy []kafka.TopicPartition) {
	for _, tp := range healthy {
		if r.m.IsOffline(tp) || r.m.Partition(tp) == nil {
			t.Fatalf("healthy %s offline", tp)
		}
		if !r.m.Partition(tp).State().IsLeader {
			continue
		}
		if _, err := r.m.AppendAsLeader(tp, batch(t, "still served"), 1); err != nil {
			t.Fatalf("healthy %s append: %v", tp, err)
		}
		rr, err := r.m.Read(tp, ReadParams{ReplicaID: ConsumerReplicaID, MaxBytes: 1 << 20, CurrentLeaderEpoch: -1, MinOneBatch: true})
		if err != nil || len(rr.Records) == 0 {
			t.Fatalf("healthy %s read: %+v %v", tp, rr, err)
		}
	}
}

// checkLeaderAndIsrAfterDirFailure: offline partitions answer ErrOffline
// and stay offline; a new partition goes to the healthy dir and is served.
// It returns the new partition.
func checkLeaderAndIsrAfterDirFailure(t *testing.T, r *offlineRig, want []kafka.TopicPartition, failed string) kafka.TopicPartition {
	n0 := kafka.TopicPartition{Topic: "n", Partition: 0}
	states := []PartitionState{state(n0, 1, 0, []int32{1}, []int32{1})}
	for _, tp := range want {
		states = append(states, state(tp, 1, 5, []int32{1}, []int32{1}))
	}
	res := r.leaderAndIsr(t, states...)
	for _, tp := range want {
		if !errors.Is(res[tp], ErrOffline) || r.m.Partition(tp) != nil {
			t.Fatalf("LeaderAndIsr on offline %s: %v", tp, res[tp])
		}
	}
	if res[n0] != nil || r.rootOf(t, n0) == failed {
		t.Fatalf("new partition: %v in %s (failed dir %s)", res[n0], r.rootOf(t, n0), failed)
	}
	if _, err := r.m.AppendAsLeader(n0, batch(t, "new"), 1); err != nil {
		t.Fatal(err)
	}
	return n0
}

// checkStopReplicaAfterDirFailure: offline partitions answer ErrOffline,
// others succeed.
func checkStopReplicaAfterDirFailure(t *testing.T, r *offlineRig, want []kafka.TopicPartition, n0 kafka.TopicPartition) {
	stop := StopReplica{ControllerEpoch: 1, Partitions: []StopPartition{{TopicPartition: n0, LeaderEpoch: NoEpoch}}}
	for _, tp := range want {
		stop.Partitions = append(stop.Partitions, StopPartition{TopicPartition: tp, LeaderEpoch: EpochDuringDelete, Delete: true})
	}
	sres, err := r.m.StopReplicas(stop)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range want {
		if !errors.Is(sres[tp], ErrOffline) || !r.m.IsOffline(tp) {
			t.Fatalf("StopReplica on offline %s: %v", tp, sres[tp])
		}
	}
	if sres[n0] != nil {
		t.Fatalf("StopReplica %s: %v", n0, sres[n0])
	}
}

// TestReplicaLeaderAndIsrLogInFailedDir: a log in a dir that has failed,
// which this broker had not served yet (loaded at start, no LeaderAndIsr
// since), is not served by a later LeaderAndIsr: the partition answers a
// storage error and goes offline.
func TestReplicaLeaderAndIsrLogInFailedDir(t *testing.T) {
	r := newOfflineRig(t, 2, 1<<20)
	z0 := kafka.TopicPartition{Topic: "z", Partition: 0}
	l, err := r.logs.GetOrCreateLog(kafka.TopicPartition{Topic: "z", Partition: 0}, storage.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.m.HandleLogDirFailure(filepath.Dir(l.Dir())); len(got) != 0 {
		t.Fatalf("nothing hosted yet, offline %v", got)
	}
	res := r.leaderAndIsr(t, state(z0, 1, 0, []int32{1}, []int32{1}))
	if !errors.Is(res[z0], storage.ErrStorage) || !r.m.IsOffline(z0) || r.m.Partition(z0) != nil {
		t.Fatalf("LeaderAndIsr with the log in a failed dir: %v, offline %v", res[z0], r.m.IsOffline(z0))
	}
}

// TestReplicaLeaderAndIsrCreateLogFails: a log that cannot be created (its
// directory name is taken by a file) answers a storage error and takes
// that partition, only that one, offline; the next LeaderAndIsr for it
// answers ErrOffline.
func TestReplicaLeaderAndIsrCreateLogFails(t *testing.T) {
	r := newOfflineRig(t, 1, 1<<20)
	x0, y0 := kafka.TopicPartition{Topic: "x", Partition: 0}, kafka.TopicPartition{Topic: "y", Partition: 0}
	if err := os.WriteFile(filepath.Join(r.dirs[0], x0.String()), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := r.leaderAndIsr(t, state(x0, 1, 0, []int32{1}, []int32{1}), state(y0, 2, 0, []int32{2, 1}, []int32{2, 1}))
	if !errors.Is(res[x0], storage.ErrStorage) || !r.m.IsOffline(x0) {
		t.Fatalf("%s: %v, offline %v", x0, res[x0], r.m.IsOffline(x0))
	}
	if res[y0] != nil || r.m.IsOffline(y0) {
		t.Fatalf("%s: %v", y0, res[y0])
	}
	res = r.leaderAndIsr(t, state(x0, 1, 1, []int32{1}, []int32{1}))
	if !errors.Is(res[x0], ErrOffline) {
		t.Fatalf("second LeaderAndIsr: %v", res[x0])
	}
}

// TestReplicaLogDirFailureConcurrent: a dir failing while LeaderAndIsr,
// appends and reads run leaves every partition of that dir offline and
// the others served (run with -race).
func TestReplicaLogDirFailureConcurrent(t *testing.T) {
	r := newOfflineRig(t, 2, 1<<20)
	var tps []kafka.TopicPartition
	var states []PartitionState
	for i := int32(0); i < 8; i++ {
		tp := kafka.TopicPartition{Topic: "c", Partition: i}
		tps = append(tps, tp)
		states = append(states, state(tp, 1, 0, []int32{1}, []int32{1}))
	}
	r.leaderAndIsr(t, states...)
	failed := r.rootOf(t, tps[0])
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, tp := range tps {
		wg.Add(1)
		b := batch(t, "c") // rewritten in place by each append: one per goroutine
		go func() {
			defer wg.Done()
			for i := 0; i < 10_000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = r.m.AppendAsLeader(tp, b, 1)
				_, _ = r.m.Read(tp, ReadParams{ReplicaID: ConsumerReplicaID, MaxBytes: 1 << 10, CurrentLeaderEpoch: -1})
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := int32(1); e < 20; e++ {
			for i := range states {
				states[i].LeaderEpoch = e
			}
			_, _ = r.m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1, Partitions: states})
		}
	}()
	r.m.HandleLogDirFailure(failed)
	close(stop)
	wg.Wait()
	for _, tp := range tps {
		p := r.m.Partition(tp)
		inFailed := p == nil
		if p != nil && filepath.Dir(p.Log().Dir()) == failed {
			t.Fatalf("%s still served from the failed dir", tp)
		}
		if inFailed != r.m.IsOffline(tp) {
			t.Fatalf("%s: hosted %v, offline %v", tp, p != nil, r.m.IsOffline(tp))
		}
		if !inFailed {
			if _, err := r.m.AppendAsLeader(tp, batch(t, "after"), 1); err != nil {
				t.Fatalf("%s: %v", tp, err)
			}
		}
	}
	if len(r.m.OfflinePartitions()) == 0 || len(r.m.OfflinePartitions()) == len(tps) {
		t.Fatalf("offline %v of %v", r.m.OfflinePartitions(), tps)
	}
}
