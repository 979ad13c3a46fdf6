package replica

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/internal/testwait"
	"samsa/kafka"
)

// dirLogs is a LogProvider over real storage logs in a temp dir.
type dirLogs struct {
	dir  string
	mu   sync.Mutex
	logs map[kafka.TopicPartition]*storage.Log
}

func (d *dirLogs) GetOrCreateLog(tp kafka.TopicPartition, cfg storage.Config, _ bool) (*storage.Log, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l, ok := d.logs[tp]; ok {
		return l, nil
	}
	l, err := storage.OpenLog(storage.LogOptions{Dir: filepath.Join(d.dir, tp.String()),
		TP: tp, Config: cfg})
	if err != nil {
		return nil, err
	}
	d.logs[tp] = l
	return l, nil
}

func (d *dirLogs) DeleteLog(tp kafka.TopicPartition) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	l, ok := d.logs[tp]
	if !ok {
		return nil
	}
	delete(d.logs, tp)
	return l.Delete()
}

func (d *dirLogs) closeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range d.logs {
		l.Close()
	}
}

func newTestManager(t *testing.T, id int32, minISR int) (*Manager, *dirLogs) {
	t.Helper()
	logs := &dirLogs{dir: t.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	m, err := New(Config{BrokerID: id, Logs: logs, TopicConfig: func(string) (TopicConfig, error) {
		return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: minISR}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); logs.closeAll() })
	return m, logs
}

func batch(t *testing.T, values ...string) []byte {
	t.Helper()
	recs := make([]record.Record, len(values))
	for i, v := range values {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: []byte(v)}
	}
	b, err := record.Build(record.NewBuildHeader(0, time.Now().UnixMilli()), recs, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var tp0 = kafka.TopicPartition{Topic: "t", Partition: 0}

func lead(t *testing.T, m *Manager, ctrlEpoch, leaderEpoch int32, isr, replicas []int32) {
	t.Helper()
	res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: ctrlEpoch,
		Partitions: []PartitionState{{TopicPartition: tp0, ControllerEpoch: ctrlEpoch, Leader: m.BrokerID(),
			LeaderEpoch: leaderEpoch, ISR: isr, Replicas: replicas}}})
	if err != nil || res[tp0] != nil {
		t.Fatalf("become leader: %v %v", err, res[tp0])
	}
}

// TestReplicaSingleReplicaHighWatermarkFollowsLogEnd: with ISR = {leader}
// the HW is the log end after every append.
func TestReplicaSingleReplicaHighWatermarkFollowsLogEnd(t *testing.T) {
	m, _ := newTestManager(t, 1, 1)
	lead(t, m, 1, 0, []int32{1}, []int32{1})
	res, err := m.AppendAsLeader(tp0, batch(t, "a", "b", "c"), -1)
	if err != nil {
		t.Fatal(err)
	}
	if res.BaseOffset != 0 || res.LastOffset != 2 {
		t.Fatalf("offsets %+v", res)
	}
	if hw := m.Partition(tp0).State().HighWatermark; hw != 3 {
		t.Fatalf("hw %d", hw)
	}
	if err := m.WaitReplicated(context.Background(), tp0, 3, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	rr, err := m.Read(tp0, ReadParams{ReplicaID: ConsumerReplicaID, FetchOffset: 0, MaxBytes: 1 << 20, CurrentLeaderEpoch: -1, MinOneBatch: true})
	if err != nil || len(rr.Records) != 1 || rr.HighWatermark != 3 {
		t.Fatalf("read %+v %v", rr, err)
	}
}

// TestReplicaHighWatermarkWaitsForFollowers: with a follower in the ISR
// the HW stays until the follower fetches past the data (Kafka: HW = min
// LEO over the ISR), and an acks=all wait completes then.
func TestReplicaHighWatermarkWaitsForFollowers(t *testing.T) {
	m, _ := newTestManager(t, 1, 2)
	lead(t, m, 1, 0, []int32{1, 2}, []int32{1, 2})
	res, err := m.AppendAsLeader(tp0, batch(t, "a", "b"), -1)
	if err != nil {
		t.Fatal(err)
	}
	if hw := m.Partition(tp0).State().HighWatermark; hw != 0 {
		t.Fatalf("hw %d before the follower fetched", hw)
	}
	err = m.WaitReplicated(context.Background(), tp0, res.LastOffset+1, time.Now().Add(50*time.Millisecond))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("wait without follower: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- m.WaitReplicated(context.Background(), tp0, res.LastOffset+1, time.Now().Add(10*time.Second))
	}()
	// The follower's first fetch (offset 0) reads the batch; its next one
	// (offset 2) says it has it.
	rr, err := m.Read(tp0, ReadParams{ReplicaID: 2, FetchOffset: 0, MaxBytes: 1 << 20, CurrentLeaderEpoch: 0})
	if err != nil || len(rr.Records) == 0 {
		t.Fatalf("follower read: %+v %v", rr, err)
	}
	if _, err := m.Read(tp0, ReadParams{ReplicaID: 2, FetchOffset: 2, MaxBytes: 1 << 20, CurrentLeaderEpoch: 0}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("acks=all wait: %v", err)
	}
	if hw := m.Partition(tp0).State().HighWatermark; hw != 2 {
		t.Fatalf("hw %d", hw)
	}
	// A consumer never sees past the HW.
	if _, err := m.AppendAsLeader(tp0, batch(t, "c"), 1); err != nil {
		t.Fatal(err)
	}
	rr, err = m.Read(tp0, ReadParams{ReplicaID: ConsumerReplicaID, FetchOffset: 2, MaxBytes: 1 << 20, CurrentLeaderEpoch: -1})
	if err != nil || len(rr.Records) != 0 {
		t.Fatalf("consumer read beyond HW: %+v %v", rr, err)
	}
}

// TestReplicaMinInsyncReplicas: acks=all with ISR < min.insync.replicas
// fails before appending; acks=1 still works.
func TestReplicaMinInsyncReplicas(t *testing.T) {
	m, _ := newTestManager(t, 1, 2)
	lead(t, m, 1, 0, []int32{1}, []int32{1, 2})
	if _, err := m.AppendAsLeader(tp0, batch(t, "a"), -1); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("acks=all: %v", err)
	}
	if _, err := m.AppendAsLeader(tp0, batch(t, "a"), 1); err != nil {
		t.Fatalf("acks=1: %v", err)
	}
}

// TestReplicaStaleEpochs: an older controller epoch is rejected for the
// whole request; a leader epoch that is not newer for the partition.
func TestReplicaStaleEpochs(t *testing.T) {
	m, _ := newTestManager(t, 1, 1)
	lead(t, m, 5, 3, []int32{1}, []int32{1})
	_, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 4})
	if !errors.Is(err, ErrStaleControllerEpoch) {
		t.Fatalf("old controller: %v", err)
	}
	res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 5,
		Partitions: []PartitionState{{TopicPartition: tp0, Leader: 1, LeaderEpoch: 3, ISR: []int32{1}, Replicas: []int32{1}}}})
	if err != nil || !errors.Is(res[tp0], ErrStaleLeaderEpoch) {
		t.Fatalf("same leader epoch: %v %v", err, res[tp0])
	}
	res, _ = m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 5,
		Partitions: []PartitionState{{TopicPartition: kafka.TopicPartition{Topic: "t", Partition: 1}, Leader: 2, LeaderEpoch: 0, ISR: []int32{2}, Replicas: []int32{2}}}})
	if !errors.Is(res[kafka.TopicPartition{Topic: "t", Partition: 1}], ErrUnknownPartition) {
		t.Fatalf("not a replica: %v", res)
	}
	if _, err := m.StopReplicas(StopReplica{ControllerEpoch: 4}); !errors.Is(err, ErrStaleControllerEpoch) {
		t.Fatalf("stop from old controller: %v", err)
	}
}

// TestReplicaStopReplicaDeletesLog: StopReplica with delete removes the
// partition and its directory; reads then answer unknown partition.
func TestReplicaStopReplicaDeletesLog(t *testing.T) {
	m, logs := newTestManager(t, 1, 1)
	lead(t, m, 1, 0, []int32{1}, []int32{1})
	if _, err := m.AppendAsLeader(tp0, batch(t, "a"), 1); err != nil {
		t.Fatal(err)
	}
	dir := m.Partition(tp0).Log().Dir()
	res, err := m.StopReplicas(StopReplica{ControllerEpoch: 1, Partitions: []StopPartition{{TopicPartition: tp0, LeaderEpoch: EpochDuringDelete, Delete: true}}})
	if err != nil || res[tp0] != nil {
		t.Fatalf("stop: %v %v", err, res)
	}
	if _, err := m.Read(tp0, ReadParams{FetchOffset: 0, MaxBytes: 100, CurrentLeaderEpoch: -1}); !errors.Is(err, ErrUnknownPartition) {
		t.Fatalf("read after stop: %v", err)
	}
	brokertestWait(t, func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) })
	_ = logs
}

// TestReplicaEpochChecksOnRead: KIP-320 current leader epoch checks.
func TestReplicaEpochChecksOnRead(t *testing.T) {
	m, _ := newTestManager(t, 1, 1)
	lead(t, m, 1, 4, []int32{1}, []int32{1})
	if _, err := m.Read(tp0, ReadParams{ReplicaID: -1, MaxBytes: 10, CurrentLeaderEpoch: 3}); !errors.Is(err, ErrFencedLeaderEpoch) {
		t.Fatalf("older epoch: %v", err)
	}
	if _, err := m.Read(tp0, ReadParams{ReplicaID: -1, MaxBytes: 10, CurrentLeaderEpoch: 5}); !errors.Is(err, ErrUnknownLeaderEpoch) {
		t.Fatalf("newer epoch: %v", err)
	}
	ee, err := m.EndOffsetForEpoch(tp0, 4, 4, -1)
	if err != nil || ee.LeaderEpoch != 4 || ee.EndOffset != 0 {
		t.Fatalf("end offset for epoch: %+v %v", ee, err)
	}
}

// brokertestWait waits up to 10 s for cond (testwait.Until).
func brokertestWait(t *testing.T, cond func() bool) {
	t.Helper()
	testwait.Until(t, 10*time.Second, "the condition", cond)
}

// TestReplicaFollowerRealign: Kafka's out-of-range handling for a
// follower — ahead of the leader's log end it truncates to it; behind the
// leader's log start it restarts its log there.
func TestReplicaFollowerRealign(t *testing.T) {
	m, _ := newTestManager(t, 1, 1)
	res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1,
		Partitions: []PartitionState{{TopicPartition: tp0, Leader: 2, LeaderEpoch: 3, ISR: []int32{2, 1}, Replicas: []int32{2, 1}}}})
	if err != nil || res[tp0] != nil {
		t.Fatal(err, res)
	}
	p := m.Partition(tp0)
	for i, v := range []string{"a", "b", "c"} {
		b, err := record.Build(record.NewBuildHeader(int64(i), time.Now().UnixMilli()), []record.Record{{Value: []byte(v)}}, record.CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Log().AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.realignForFollower(3, 0, 1); err != nil {
		t.Fatal(err)
	}
	if leo := p.Log().LogEndOffset(); leo != 1 {
		t.Fatalf("log end %d after truncating to the leader's end", leo)
	}
	if err := p.realignForFollower(3, 10, 20); err != nil {
		t.Fatal(err)
	}
	if s, e := p.Log().LogStartOffset(), p.Log().LogEndOffset(); s != 10 || e != 10 {
		t.Fatalf("log [%d, %d) after restarting at the leader's start", s, e)
	}
	// A stale epoch changes nothing.
	if err := p.realignForFollower(2, 0, 0); err != nil || p.Log().LogEndOffset() != 10 {
		t.Fatalf("stale realign: %v, end %d", err, p.Log().LogEndOffset())
	}
	// Reads from a follower are refused.
	if _, err := m.Read(tp0, ReadParams{ReplicaID: -1, FetchOffset: 10, MaxBytes: 10, CurrentLeaderEpoch: -1}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("consumer read on a follower: %v", err)
	}
}
