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

	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("kr"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(100))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics("kr"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var produced, consumed atomic.Int64
	stop := make(chan struct{})
	prodDone := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				prodDone <- nil
				return
			default:
			}
			pctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			err := prod.ProduceSync(pctx, &kgo.Record{Value: []byte(fmt.Sprintf("r%d", i))}).FirstErr()
			cancel()
			if err != nil {
				prodDone <- fmt.Errorf("record %d: %w", i, err)
				return
			}
			produced.Add(1)
		}
	}()
	consDone := make(chan struct{})
	consCtx, consCancel := context.WithCancel(context.Background())
	go func() {
		defer close(consDone)
		next := 0
		for consCtx.Err() == nil {
			cons.PollFetches(consCtx).EachRecord(func(r *kgo.Record) {
				if string(r.Value) != fmt.Sprintf("r%d", next) {
					t.Errorf("consumed %q at offset %d, want r%d", r.Value, r.Offset, next)
				}
				next++
				consumed.Add(1)
			})
		}
	}()
	defer func() { consCancel(); <-consDone }()
	waitProgress := func(what string) {
		t.Helper()
		p0, c0 := produced.Load(), consumed.Load()
		brokertest.WaitFor(t, 15*time.Second, func() error {
			if produced.Load() < p0+20 || consumed.Load() < c0+20 {
				return fmt.Errorf("%s: produced %d, consumed %d", what, produced.Load(), consumed.Load())
			}
			return nil
		})
	}
	waitProgress("before the move")

	td, err := adm.ListTopics(ctx, "kr")
	if err != nil {
		t.Fatal(err)
	}
	p := td["kr"].Partitions[0]
	oldLeader := p.Leader
	// Move the current leader to the end of the replica list: another
	// broker becomes the preferred leader.
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
	ts := kadm.TopicsSet{}
	ts.Add("kr", 0)
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
		if l := td["kr"].Partitions[0].Leader; l != replicas[0] {
			return fmt.Errorf("leader %d, want %d", l, replicas[0])
		}
		return nil
	})
	// A second election has nothing to do.
	el, _ = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, ts)
	if r := el["kr"][0]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		t.Fatalf("second election: %+v", el)
	}
	waitProgress("after the move")
	close(stop)
	if err := <-prodDone; err != nil {
		t.Fatalf("producer across the leader move: %v", err)
	}
	brokertest.WaitFor(t, 15*time.Second, func() error {
		if produced.Load() != consumed.Load() {
			return fmt.Errorf("produced %d, consumed %d", produced.Load(), consumed.Load())
		}
		return nil
	})

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
