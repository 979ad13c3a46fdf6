package broker_test

// Transactions against their non-transactional baselines, side by side in
// one run (issue 15's targets: transactional produce >= 0.7x idempotent,
// read_committed consume >= 0.9x read_uncommitted):
//
//	go test ./broker/ -run '^$' -bench 'BenchmarkClusterTxn' -benchtime 20x -count 3 -p 1
//
// Both halves of each pair run on the same one-broker in-process cluster
// with franz-go, 6 partitions, 100 B values; compare the records/s metric
// of the two sub-benchmarks. docs/benchmarks.md records a run.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

const (
	benchTxnRecords    = 1000 // records per transaction (or per flushed batch)
	benchTxnValue      = 100
	benchTxnPartitions = 6
)

func benchTxnClient(b *testing.B, c *brokertest.Cluster, opts ...kgo.Opt) *kgo.Client {
	b.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner())}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return cl
}

// benchTxnRound produces benchTxnRecords records, in one transaction when
// txn is set, and waits until they are acknowledged (committed).
func benchTxnRound(ctx context.Context, cl *kgo.Client, topic string, txn bool, val []byte) error {
	if txn {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
	}
	var first error
	done := make(chan struct{}, benchTxnRecords)
	for i := 0; i < benchTxnRecords; i++ {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: val}, func(_ *kgo.Record, err error) {
			if err != nil && first == nil {
				first = err
			}
			done <- struct{}{}
		})
	}
	// franz-go wants the buffer flushed before EndTransaction.
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if txn {
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return err
		}
	}
	for i := 0; i < benchTxnRecords; i++ {
		<-done
	}
	return first
}

// BenchmarkClusterTxnProduce: idempotent (franz-go's default) vs
// transactional produce of 1,000 x 100 B records per round.
func BenchmarkClusterTxnProduce(b *testing.B) {
	c := txnClusterB(b)
	c.CreateTopic(b, "bench-txn-p", benchTxnPartitions, 1)
	val := make([]byte, benchTxnValue)
	for _, mode := range []string{"idempotent", "transactional"} {
		b.Run(mode, func(b *testing.B) {
			txn := mode == "transactional"
			var opts []kgo.Opt
			if txn {
				opts = append(opts, kgo.TransactionalID("bench-"+fmt.Sprint(time.Now().UnixNano())))
			}
			cl := benchTxnClient(b, c, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			if err := benchTxnRound(ctx, cl, "bench-txn-p", txn, val); err != nil { // warm-up: metadata, producer id
				b.Fatal(err)
			}
			b.SetBytes(benchTxnRecords * benchTxnValue)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := benchTxnRound(ctx, cl, "bench-txn-p", txn, val); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*benchTxnRecords)/time.Since(start).Seconds(), "records/s")
		})
	}
}

// BenchmarkClusterTxnConsume: read_uncommitted vs read_committed reads of
// the same 50 committed transactions (50,000 records, 6 partitions, with
// their commit markers) by a new consumer each iteration.
func BenchmarkClusterTxnConsume(b *testing.B) {
	const rounds = 50
	c := txnClusterB(b)
	c.CreateTopic(b, "bench-txn-c", benchTxnPartitions, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	p := benchTxnClient(b, c, kgo.TransactionalID("bench-fill"))
	val := make([]byte, benchTxnValue)
	for i := 0; i < rounds; i++ {
		if err := benchTxnRound(ctx, p, "bench-txn-c", true, val); err != nil {
			b.Fatal(err)
		}
	}
	total := rounds * benchTxnRecords
	for _, iso := range []struct {
		name  string
		level kgo.IsolationLevel
	}{{"read_uncommitted", kgo.ReadUncommitted()}, {"read_committed", kgo.ReadCommitted()}} {
		b.Run(iso.name, func(b *testing.B) {
			b.SetBytes(int64(total * benchTxnValue))
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics("bench-txn-c"),
					kgo.FetchIsolationLevel(iso.level), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				rctx, rcancel := context.WithTimeout(ctx, 60*time.Second)
				for got < total {
					if rctx.Err() != nil {
						rcancel()
						adm := kadm.NewClient(p)
						lso, _ := adm.ListCommittedOffsets(ctx, "bench-txn-c")
						leo, _ := adm.ListEndOffsets(ctx, "bench-txn-c")
						d, derr := adm.DescribeTransactions(ctx, "bench-fill")
						b.Fatalf("consumed %d of %d: %v; lso %v leo %v txn %+v %v", got, total, rctx.Err(), lso, leo, d, derr)
					}
					fs := cl.PollFetches(rctx)
					got += fs.NumRecords()
				}
				rcancel()
				cl.Close()
				if got != total {
					b.Fatalf("consumed %d records, want %d", got, total)
				}
			}
			b.ReportMetric(float64(b.N*total)/time.Since(start).Seconds(), "records/s")
		})
	}
}

// txnClusterB is a one-broker cluster with small internal topics.
func txnClusterB(b *testing.B) *brokertest.Cluster {
	return brokertest.NewCluster(b, 1,
		brokertest.WithProperty("transaction.state.log.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.num.partitions", "3"))
}

// txnStepHook sums franz-go's end-to-end time per request kind.
type txnStepHook struct {
	mu  sync.Mutex
	n   map[int16]int
	dur map[int16]time.Duration
}

func (h *txnStepHook) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n[key]++
	h.dur[key] += e.DurationE2E()
}

func (h *txnStepHook) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n, h.dur = map[int16]int{}, map[int16]time.Duration{}
}

// BenchmarkClusterTxnSteps: where a round's time goes, per request kind
// as franz-go sees it (requests per round and ms per round, summed over
// the requests, which partly overlap: one Produce and, transactional, one
// AddPartitionsToTxn per partition leader), idempotent against
// transactional, on one broker (RF 1) and three (RF 3, min.insync.replicas
// 2 for __transaction_state):
//
//	go test ./broker/ -run '^$' -bench 'BenchmarkClusterTxnSteps' -benchtime 100x -p 1
//
// (one cluster per top-level benchmark: brokertest checks for leaked
// goroutines when its cluster closes)
func BenchmarkClusterTxnSteps1(b *testing.B) { benchTxnSteps(b, 1) }

func BenchmarkClusterTxnSteps3(b *testing.B) { benchTxnSteps(b, 3) }

func benchTxnSteps(b *testing.B, n int) {
	c := brokertest.NewCluster(b, n,
		brokertest.WithProperty("transaction.state.log.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.num.partitions", "3"))
	c.CreateTopic(b, "bench-txn-s", benchTxnPartitions, int16(n))
	val := make([]byte, benchTxnValue)
	for _, mode := range []string{"idempotent", "transactional"} {
		b.Run(mode, func(b *testing.B) {
			txn := mode == "transactional"
			h := &txnStepHook{}
			h.reset()
			opts := []kgo.Opt{kgo.WithHooks(h)}
			if txn {
				opts = append(opts, kgo.TransactionalID("bench-steps-"+fmt.Sprint(time.Now().UnixNano())))
			}
			cl := benchTxnClient(b, c, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			if err := benchTxnRound(ctx, cl, "bench-txn-s", txn, val); err != nil {
				b.Fatal(err)
			}
			h.reset()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := benchTxnRound(ctx, cl, "bench-txn-s", txn, val); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			h.mu.Lock()
			defer h.mu.Unlock()
			for key, cnt := range h.n {
				name := kmsg.NameForKey(key)
				b.ReportMetric(float64(cnt)/float64(b.N), name+"-reqs/round")
				b.ReportMetric(float64(h.dur[key].Microseconds())/1000/float64(b.N), name+"-ms/round")
			}
		})
	}
}
