package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Transactions (issue 15's targets), each pair measured side by side on
// the same cluster: transactional produce against idempotent produce
// (acks=all, 100 B records, 6 partitions), and read_committed against
// read_uncommitted reads of the same committed transactions.
//
//   - kgo: transactions of txnRecords records (Begin, produce, Flush,
//     EndTransaction commit), against the same records flushed in rounds
//     of txnRecords by an idempotent producer.
//   - sarama: Samsa's kafka-producer-perf-test with --transactional-id and
//     --transaction-duration-ms txnSaramaMs (Kafka's own perf test counts
//     transactions by duration), against enable.idempotence=true; and
//     kafka-consumer-perf-test with isolation.level in --consumer.config.

const (
	txnRecords  = 1000 // records per kgo transaction
	txnSaramaMs = 100  // Sarama perf-test transaction duration
)

// txnProduceCell names: Acks carries the mode of a txn cell.
const (
	modeIdempotent    = "idempotent"
	modeTransactional = "transactional"
	modeUncommitted   = "read_uncommitted"
	modeCommitted     = "read_committed"
)

// kgoTxnProduce sends n records of size bytes to topic in rounds of
// txnRecords, each round a committed transaction when txnID is set, else
// flushed by an idempotent producer; acks=all.
func kgoTxnProduce(ctx context.Context, c *cluster, topic string, n, size int, txnID string, timeout time.Duration) (throughput, error) {
	opts := []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), roundRobin()}
	if txnID != "" {
		opts = append(opts, kgo.TransactionalID(txnID))
	}
	cl, err := c.client(opts...)
	if err != nil {
		return throughput{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	payload := make([]byte, size)
	var failed atomic.Int64
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
		}
	}
	round := func(k int) error {
		if txnID != "" {
			if err := cl.BeginTransaction(); err != nil {
				return err
			}
		}
		for range k {
			cl.Produce(ctx, &kgo.Record{Value: payload}, done)
		}
		if err := cl.Flush(ctx); err != nil {
			return err
		}
		if txnID != "" {
			return cl.EndTransaction(ctx, kgo.TryCommit)
		}
		return nil
	}
	if err := round(1); err != nil { // warm-up: metadata, producer id
		return throughput{}, fmt.Errorf("bench: kgo %s warm-up: %w", topic, err)
	}
	start := time.Now()
	for sent := 0; sent < n; sent += txnRecords {
		if err := round(min(txnRecords, n-sent)); err != nil {
			return throughput{}, fmt.Errorf("bench: kgo %s: %w", topic, err)
		}
	}
	secs := time.Since(start).Seconds()
	if f := failed.Load(); f > 0 {
		return throughput{}, fmt.Errorf("bench: kgo %s: %d records failed", topic, f)
	}
	return throughput{Records: float64(n) / secs, MiB: float64(n) * float64(size) / (1 << 20) / secs}, nil
}

// kgoConsumeIsolation is kgoConsume at an isolation level.
func kgoConsumeIsolation(ctx context.Context, c *cluster, topic string, n int, committed bool, timeout time.Duration) (throughput, error) {
	level := kgo.ReadUncommitted()
	if committed {
		level = kgo.ReadCommitted()
	}
	return kgoConsume(ctx, c, topic, n, timeout, kgo.FetchIsolationLevel(level))
}

// saramaTxnProduce runs the producer perf tool idempotent or, with txnID,
// transactional with transactions of txnSaramaMs.
func saramaTxnProduce(ctx context.Context, bin, bootstrap, topic string, n, size int, txnID string, timeout time.Duration) (throughput, error) {
	args := append(saramaProducerArgs(bootstrap, topic, n, size, "all"), "enable.idempotence=true")
	if txnID != "" {
		args = append(args, "--transactional-id", txnID, "--transaction-duration-ms", strconv.Itoa(txnSaramaMs))
	}
	out, err := runTool(ctx, bin, args, timeout)
	if err != nil {
		return throughput{}, err
	}
	return parseProducerTotal(out, n)
}

// saramaConsumeIsolation runs the consumer perf tool at an isolation level.
func saramaConsumeIsolation(ctx context.Context, bin, work, bootstrap, topic string, n int, committed bool, timeout time.Duration) (throughput, error) {
	level := modeUncommitted
	if committed {
		level = modeCommitted
	}
	cfg := filepath.Join(work, "consumer-"+level+".properties")
	if err := os.WriteFile(cfg, []byte("isolation.level="+level+"\nauto.offset.reset=earliest\n"), 0o644); err != nil {
		return throughput{}, fmt.Errorf("bench: %w", err)
	}
	// A longer --timeout than the plain consume cells: the tool counts its
	// group join (group.initial.rebalance.delay.ms, 3 s) in it.
	args := []string{"kafka-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic,
		"--messages", strconv.Itoa(n), "--timeout", "30000", "--hide-header", "--consumer.config", cfg}
	out, err := runTool(ctx, bin, args, timeout)
	if err != nil {
		return throughput{}, err
	}
	return parseConsumerLine(out, n)
}

// runTxn measures the transaction cells of one cluster.
func runTxn(ctx context.Context, o options, res *results, c *cluster, sys string, topo topology) error {
	timeout := 180 * time.Second
	n := o.records100 / 3
	consumeTopic := map[string]string{}
	for _, client := range []string{"sarama", "kgo"} {
		for _, mode := range []string{modeIdempotent, modeTransactional} {
			cell := &cell{Kind: "txn-produce", System: sys, Topo: topo, Size: 100, Acks: mode, Client: client, N: n}
			c.rss.reset()
			for r := range o.repeats {
				topic := fmt.Sprintf("txn-%s-%s-%d", client, mode, r)
				if err := c.createTopic(ctx, topic, 6, topo.RF); err != nil {
					return err
				}
				txnID := ""
				if mode == modeTransactional {
					txnID = fmt.Sprintf("bench-%s-%d-%d", client, topo.Brokers, r)
				}
				var t throughput
				var err error
				if client == "sarama" {
					t, err = saramaTxnProduce(ctx, o.samsaBin, c.bootstrap, topic, n, 100, txnID, timeout)
				} else {
					t, err = kgoTxnProduce(ctx, c, topic, n, 100, txnID, timeout)
				}
				if err != nil {
					cell.Errs = append(cell.Errs, err.Error())
					logf("%s %s: %v", sys, cell.label(), err)
					continue
				}
				cell.Runs = append(cell.Runs, t)
				if mode == modeTransactional && consumeTopic[client] == "" {
					consumeTopic[client] = topic
					continue
				}
				c.deleteTopic(ctx, topic)
			}
			cell.RSS = c.rss.maxPeak()
			logf("%s %s: %s", sys, cell.label(), cell.summary())
			res.Cells = append(res.Cells, cell)
		}
	}
	// Both isolation levels read the same committed transactions (the
	// kgo ones: the whole count, commit markers between every 1,000).
	topic := consumeTopic["kgo"]
	if topic == "" {
		return nil
	}
	// Sarama (kafka-consumer-perf-test, a consumer group) and kgo. The
	// Sarama cells once read 0 records: with -txn-only a Metadata request
	// had auto-created __consumer_offsets with num.partitions (6), so the
	// tool's group, hashing past partition 5 of offsets.topic.num.partitions,
	// had no coordinator (fixed in broker/topics.go).
	for _, client := range []string{"sarama", "kgo"} {
		for _, mode := range []string{modeUncommitted, modeCommitted} {
			cell := &cell{Kind: "txn-consume", System: sys, Topo: topo, Size: 100, Acks: mode, Client: client, N: n}
			c.rss.reset()
			for range o.repeats {
				var t throughput
				var err error
				if client == "sarama" {
					t, err = saramaConsumeIsolation(ctx, o.samsaBin, o.work, c.bootstrap, topic, n, mode == modeCommitted, timeout)
				} else {
					t, err = kgoConsumeIsolation(ctx, c, topic, n, mode == modeCommitted, timeout)
				}
				if err != nil {
					cell.Errs = append(cell.Errs, err.Error())
					logf("%s %s: %v", sys, cell.label(), err)
					continue
				}
				cell.Runs = append(cell.Runs, t)
			}
			cell.RSS = c.rss.maxPeak()
			logf("%s %s: %s", sys, cell.label(), cell.summary())
			res.Cells = append(res.Cells, cell)
		}
	}
	return nil
}

// renderTxn writes the transaction table (empty without txn cells).
func renderTxn(w func(string, ...any), r *results, topos []topology) {
	any := false
	for _, c := range r.Cells {
		any = any || c.Kind == "txn-produce"
	}
	if !any {
		return
	}
	w("\n### Transactions (100 B, acks=all, 6 partitions)\n\n")
	w("Side by side on each cluster. kgo: transactions of %d records (produce, flush, commit) against an idempotent "+
		"producer flushing the same rounds; Sarama: `kafka-producer-perf-test --transactional-id --transaction-duration-ms %d` "+
		"against `enable.idempotence=true`. Both isolation levels read the kgo transactional topic (commit markers every %d records). "+
		"Targets (issue 15): transactional ≥ 0.7× idempotent, read_committed ≥ 0.9× read_uncommitted.\n\n",
		txnRecords, txnSaramaMs, txnRecords)
	w("| system | cluster | client | idempotent rec/s | transactional rec/s | txn/idempotent | read_uncommitted rec/s | read_committed rec/s | committed/uncommitted |\n")
	w("|---|---|---|---|---|---|---|---|---|\n")
	for _, sys := range r.Opts.systems {
		for _, t := range topos {
			for _, client := range []string{"sarama", "kgo"} {
				ip, tp := r.find("txn-produce", sys, client, t, 100, modeIdempotent), r.find("txn-produce", sys, client, t, 100, modeTransactional)
				uc, rc := r.find("txn-consume", sys, client, t, 100, modeUncommitted), r.find("txn-consume", sys, client, t, 100, modeCommitted)
				if ip == nil && tp == nil {
					continue
				}
				w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", sys, t, client, recs(ip), recs(tp), ratio(val(tp), val(ip)),
					recs(uc), recs(rc), ratio(val(rc), val(uc)))
			}
		}
	}
}
