package clustertest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// TestCompatKadmReassignAndElect: on three brokers, franz-go's admin client
// reorders a partition's replicas (AlterPartitionAssignments), lists
// reassignments, elects the new preferred leader (ElectLeaders) and
// describes every broker's log dirs, while a kgo producer and consumer keep
// working across the leader move (NOT_LEADER_OR_FOLLOWER, metadata refresh).
func TestCompatKadmReassignAndElect(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("offsets.topic.num.partitions", "2"),
		brokertest.WithProperty("auto.leader.rebalance.enable", "false"))
	c.CreateTopic(t, "kr", 1, 3)
	c.WaitForISR(t, "kr", 0, 3)
	// kgo answers admin Metadata requests from its cache for MetadataMinAge.
	adm, _ := newKadm(t, c.Addrs(), kgo.MetadataMinAge(10*time.Millisecond))
	ctx := kctx(t)

	load := startKrLoad(t, c.Addrs())
	defer load.stopConsumer()
	load.waitProgress("before the move")
	replicas := kadmMovePreferredLeader(t, ctx, adm)
	ts := kadm.TopicsSet{}
	ts.Add("kr", 0)
	kadmElectPreferred(t, ctx, adm, ts, replicas[0])
	load.waitProgress("after the move")
	load.finish()

	ld, err := adm.DescribeAllLogDirs(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	var brokers []string
	ld.Each(func(d kadm.DescribedLogDir) {
		if d.Err != nil {
			t.Errorf("log dir %s of %d: %v", d.Dir, d.Broker, d.Err)
		}
		if p, ok := d.Topics["kr"][0]; ok && p.Size > 0 {
			brokers = append(brokers, fmt.Sprint(d.Broker))
		}
	})
	if len(brokers) != 3 {
		t.Fatalf("kr-0 has data in the log dirs of brokers %s, want all three", strings.Join(brokers, ","))
	}
}

// krLoad is TestCompatKadmReassignAndElect's traffic on kr: one acks=all
// producer writing r0, r1, ... in order and one consumer checking that it
// reads them in that order.
type krLoad struct {
	t                  *testing.T
	produced, consumed atomic.Int64
	stop               chan struct{}
	prodDone           chan error
	consDone           chan struct{}
	consCancel         context.CancelFunc
}

func startKrLoad(t *testing.T, addrs []string) *krLoad {
	t.Helper()
	prod, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("kr"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(100))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	cons, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics("kr"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cons.Close)
	l := &krLoad{t: t, stop: make(chan struct{}), prodDone: make(chan error, 1), consDone: make(chan struct{})}
	go func() {
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				l.prodDone <- nil
				return
			default:
			}
			pctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			err := prod.ProduceSync(pctx, &kgo.Record{Value: []byte(fmt.Sprintf("r%d", i))}).FirstErr()
			cancel()
			if err != nil {
				l.prodDone <- fmt.Errorf("record %d: %w", i, err)
				return
			}
			l.produced.Add(1)
		}
	}()
	var consCtx context.Context
	consCtx, l.consCancel = context.WithCancel(context.Background())
	go func() {
		defer close(l.consDone)
		next := 0
		for consCtx.Err() == nil {
			cons.PollFetches(consCtx).EachRecord(func(r *kgo.Record) {
				if string(r.Value) != fmt.Sprintf("r%d", next) {
					t.Errorf("consumed %q at offset %d, want r%d", r.Value, r.Offset, next)
				}
				next++
				l.consumed.Add(1)
			})
		}
	}()
	return l
}

// waitProgress waits until 20 more records are produced and consumed.
func (l *krLoad) waitProgress(what string) {
	l.t.Helper()
	p0, c0 := l.produced.Load(), l.consumed.Load()
	brokertest.WaitFor(l.t, 15*time.Second, func() error {
		if l.produced.Load() < p0+20 || l.consumed.Load() < c0+20 {
			return fmt.Errorf("%s: produced %d, consumed %d", what, l.produced.Load(), l.consumed.Load())
		}
		return nil
	})
}

// finish stops the producer, which must have had no error, and waits
// until the consumer has read everything it wrote.
func (l *krLoad) finish() {
	l.t.Helper()
	close(l.stop)
	if err := <-l.prodDone; err != nil {
		l.t.Fatalf("producer across the leader move: %v", err)
	}
	brokertest.WaitFor(l.t, 15*time.Second, func() error {
		if l.produced.Load() != l.consumed.Load() {
			return fmt.Errorf("produced %d, consumed %d", l.produced.Load(), l.consumed.Load())
		}
		return nil
	})
}

func (l *krLoad) stopConsumer() { l.consCancel(); <-l.consDone }

// kadmMovePreferredLeader reassigns kr-0 with its current leader moved to
// the end of the replica list, so another broker becomes the preferred
// leader, waits for the move, checks that a reassignment to an unknown
// broker fails, and returns the new replica list.
func kadmMovePreferredLeader(t *testing.T, ctx context.Context, adm *kadm.Client) []int32 {
	t.Helper()
	td, err := adm.ListTopics(ctx, "kr")
	if err != nil {
		t.Fatal(err)
	}
	p := td["kr"].Partitions[0]
	oldLeader := p.Leader
	replicas := slices.DeleteFunc(slices.Clone(p.Replicas), func(r int32) bool { return r == oldLeader })
	replicas = append(replicas, oldLeader)
	ar, err := adm.AlterPartitionAssignments(ctx, kadm.AlterPartitionAssignmentsReq{"kr": {0: replicas}})
	if err != nil || ar.Error() != nil {
		t.Fatalf("alter partition assignments: %+v %v", ar, err)
	}
	brokertest.WaitFor(t, 15*time.Second, func() error {
		lr, err := adm.ListPartitionReassignments(ctx, nil)
		if err != nil {
			return err
		}
		if len(lr) != 0 {
			return fmt.Errorf("reassignments still listed: %+v", lr)
		}
		td, err := adm.ListTopics(ctx, "kr")
		if err != nil {
			return err
		}
		if got := td["kr"].Partitions[0].Replicas; !slices.Equal(got, replicas) {
			return fmt.Errorf("replicas %v, want %v", got, replicas)
		}
		return nil
	})
	// Reassigning to a broker that does not exist fails.
	ar, _ = adm.AlterPartitionAssignments(ctx, kadm.AlterPartitionAssignmentsReq{"kr": {0: {replicas[0], 99}}})
	if r := ar["kr"][0]; !errors.Is(r.Err, kerr.InvalidReplicaAssignment) {
		t.Fatalf("reassignment to an unknown broker: %+v", ar)
	}
	return replicas
}

// kadmElectPreferred elects kr-0's preferred leader (want) and checks that
// a second election has nothing to do.
func kadmElectPreferred(t *testing.T, ctx context.Context, adm *kadm.Client, ts kadm.TopicsSet, want int32) {
	t.Helper()
	el, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, ts)
	if err != nil {
		t.Fatal(err)
	}
	if r := el["kr"][0]; r.Err != nil {
		t.Fatalf("elect leaders: %+v", r)
	}
	brokertest.WaitFor(t, 15*time.Second, func() error {
		td, err := adm.ListTopics(ctx, "kr")
		if err != nil {
			return err
		}
		if l := td["kr"].Partitions[0].Leader; l != want {
			return fmt.Errorf("leader %d, want %d", l, want)
		}
		return nil
	})
	// A second election has nothing to do.
	el, _ = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, ts)
	if r := el["kr"][0]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		t.Fatalf("second election: %+v", el)
	}
}

// TestCompatFetchTinyMaxBytes: KIP-74. With fetch max bytes far below one
// record batch, franz-go and librdkafka still get every record (the first
// batch is returned whole whatever the limit), and records larger than the
// limit arrive intact.
func TestCompatFetchTinyMaxBytes(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "tiny", 1, 1)
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("tiny"),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	var want []string
	for i := 0; i < 20; i++ {
		v := fmt.Sprintf("%d-%s", i, strings.Repeat("x", 20000+i*1000))
		want = append(want, v)
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics("tiny"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(1000), kgo.FetchMaxPartitionBytes(1000),
		kgo.BrokerMaxReadBytes(1<<20), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []string
	for len(got) < len(want) {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("kgo consumed %d of %d", len(got), len(want))
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if !slices.Equal(got, want) {
		t.Fatalf("kgo read %d records, not the ones produced", len(got))
	}

	kcat := optionalKcat(t)
	if kcat == "" {
		return
	}
	msgs := kcatJSON(t, kcat, c.Addr(0), "tiny", 0, "beginning", "-X", "fetch.max.bytes=1000",
		"-X", "message.max.bytes=1000", "-X", "fetch.message.max.bytes=1000", "-X", "receive.message.max.bytes=1000000")
	if len(msgs) != len(want) {
		t.Fatalf("kcat read %d of %d records", len(msgs), len(want))
	}
	for i, m := range msgs {
		if derefOr(m.Payload, "") != want[i] {
			t.Fatalf("kcat record %d differs", i)
		}
	}
}
