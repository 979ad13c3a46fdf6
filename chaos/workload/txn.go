package workload

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/chaos/history"
)

// TxnTopic is the transactional workload's topic (3 partitions, RF 3,
// min.insync.replicas 2): the multi-partition transactions' records and the
// consume-transform-produce output.
const TxnTopic = "samsa-chaos-txn"

const (
	txnPartitions = 3
	txnRate       = 4  // transactions per second per multi-partition producer
	txnAbortEvery = 4  // every 4th multi-partition transaction is aborted on purpose
	ctpMaxRecords = 50 // input records per consume-transform-produce transaction
	txnTimeout    = 10 * time.Second
	endTimeout    = 30 * time.Second
)

// Txn is the transactional workload; see the package comment.
type Txn struct {
	env      Env
	prodStop context.CancelFunc
	readStop context.CancelFunc
	prodWG   sync.WaitGroup
	readWG   sync.WaitGroup
}

func (t *Txn) Name() string { return "txn" }

// Start creates the transactional topic and launches the two
// multi-partition producers (franz-go, Sarama), the two
// consume-transform-produce members and the read_committed reader.
func (t *Txn) Start(ctx context.Context, env Env) error {
	t.env = env
	if err := createTopicOnce(ctx, env.Bootstrap, TxnTopic, txnPartitions, env.Unclean); err != nil {
		return err
	}
	pctx, pcancel := context.WithCancel(ctx)
	rctx, rcancel := context.WithCancel(ctx)
	t.prodStop, t.readStop = pcancel, rcancel
	run := func(wg *sync.WaitGroup, f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	run(&t.prodWG, func() {
		t.multiPartition(pctx, "txn-kgo", "kgo", func() (txnProducer, error) {
			cl, err := kgo.NewClient(t.txnOpts("txn-kgo")...)
			return kgoTxn{cl}, err
		})
	})
	run(&t.prodWG, func() {
		t.multiPartition(pctx, "txn-sarama", "sarama", func() (txnProducer, error) {
			sp, err := newSaramaTxnProducer(t.env.Bootstrap, "samsa-chaos-txn-sarama")
			return saramaTxn{sp}, err
		})
	})
	for i := 0; i < 2; i++ {
		name := fmt.Sprintf("ctp-%d", i)
		run(&t.prodWG, func() { t.transform(pctx, name) })
	}
	run(&t.readWG, func() { t.read(rctx, "txn-reader") })
	return nil
}

// Stop ends the producers (each finishes the transaction it is in), then
// the reader.
func (t *Txn) Stop(ctx context.Context) error {
	t.prodStop()
	if err := waitGroup(ctx, &t.prodWG); err != nil {
		return fmt.Errorf("workload: txn producers: %w", err)
	}
	t.readStop()
	if err := waitGroup(ctx, &t.readWG); err != nil {
		return fmt.Errorf("workload: txn reader: %w", err)
	}
	return nil
}

// FinalRead commits a fence transaction (one record per partition), then
// reads the topic read_committed from the start until every partition's
// fence: past it, every earlier transaction is decided.
func (t *Txn) FinalRead(ctx context.Context) error {
	return txnFinalRead(ctx, t.env, 120*time.Second)
}

func (t *Txn) txnOpts(name string) []kgo.Opt {
	return append(commonOpts(t.env.Bootstrap),
		kgo.TransactionalID("samsa-chaos-"+name),
		kgo.TransactionTimeout(txnTimeout),
		kgo.DefaultProduceTopic(TxnTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProduceRequestTimeout(10*time.Second),
		kgo.RecordDeliveryTimeout(20*time.Second),
	)
}

// endTxn records how a transaction ended: committed when a commit was
// asked and answered, aborted for certain when an abort was asked (a
// transaction is committed only by its producer's EndTxn(commit), so one
// whose abort failed is aborted by the coordinator's timeout or the next
// epoch's fence), indeterminate when a commit failed.
func endTxn(h *history.Writer, name, id string, commit bool, err error) {
	op := history.Op{Process: name, F: history.Txn, Value: id}
	switch {
	case !commit:
		op.Type = history.Fail
	case err != nil:
		op.Type = history.Info
	default:
		op.Type = history.OK
	}
	if err != nil {
		op.Err = err.Error()
	}
	h.Add(op)
}

// txnProducer is one client's transactional producer as multiPartition
// drives it.
type txnProducer interface {
	Begin() error
	// Send writes vals[p] to partition p and waits for the outcome.
	Send(vals []string) error
	// End commits or aborts.
	End(commit bool) error
	// Fatal reports whether the producer is unusable even without an
	// error from End.
	Fatal() bool
	Close()
}

// multiPartition writes transactions of one record to every partition,
// committing three in four and aborting the fourth; open makes the
// client's producer (again after any error: a new producer's
// InitProducerId bumps the epoch and fences whatever the old one left
// open).
func (t *Txn) multiPartition(ctx context.Context, name, client string, open func() (txnProducer, error)) {
	h := t.env.History
	var tp txnProducer
	defer func() {
		if tp != nil {
			tp.Close()
		}
	}()
	tick := pace(ctx, txnRate)
	for n := int64(1); ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		if tp == nil {
			var err error
			if tp, err = open(); err != nil {
				tp = nil
				continue
			}
		}
		id := fmt.Sprintf("%s/%d", name, n)
		h.Add(history.Op{Process: name, Type: history.Invoke, F: history.Txn, Value: id, Client: client})
		if err := tp.Begin(); err != nil {
			endTxn(h, name, id, false, err)
			tp.Close()
			tp = nil
			continue
		}
		vals := make([]string, txnPartitions)
		for p := range vals {
			vals[p] = fmt.Sprintf("%s/%d", id, p)
			h.Add(history.Op{Process: name, Type: history.Invoke, F: history.TxnSend, Value: vals[p], Partition: int32(p), TxnID: id, Client: client})
		}
		serr := tp.Send(vals)
		commit := serr == nil && n%txnAbortEvery != 0
		err := tp.End(commit)
		if err == nil && serr != nil {
			err = serr // why it aborted, for the history
		}
		endTxn(h, name, id, commit, err)
		if err != nil || tp.Fatal() {
			tp.Close()
			tp = nil
		}
	}
}

// kgoTxn is franz-go's transactional producer. Its produce and EndTxn
// calls are not cancelled by the workload's context: one cancelled half
// way leaves the client's transaction state unknowable; endTimeout bounds
// them.
type kgoTxn struct{ cl *kgo.Client }

func (k kgoTxn) Begin() error { return k.cl.BeginTransaction() }

func (k kgoTxn) Send(vals []string) error {
	recs := make([]*kgo.Record, len(vals))
	for p, v := range vals {
		recs[p] = &kgo.Record{Partition: int32(p), Value: []byte(v)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	return k.cl.ProduceSync(ctx, recs...).FirstErr()
}

func (k kgoTxn) End(commit bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	return k.cl.EndTransaction(ctx, kgo.TransactionEndTry(commit))
}

func (k kgoTxn) Fatal() bool { return false }
func (k kgoTxn) Close()      { k.cl.Close() }

// transform is one member of the consume-transform-produce group: it reads
// the queue topic read_committed and, in one transaction per poll, writes
// one record per input record to the transactional topic (same partition)
// and commits the input offsets (franz-go's GroupTransactSession).
func (t *Txn) transform(ctx context.Context, name string) {
	h := t.env.History
	var s *kgo.GroupTransactSession
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	for n := int64(1); ctx.Err() == nil; {
		if s == nil {
			var err error
			s, err = kgo.NewGroupTransactSession(append(t.txnOpts(name),
				kgo.ConsumerGroup("samsa-chaos-ctp"),
				kgo.ConsumeTopics(t.env.Topic),
				kgo.FetchIsolationLevel(kgo.ReadCommitted()),
				kgo.RequireStableFetchOffsets(),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
				kgo.FetchMaxWait(500*time.Millisecond),
				kgo.SessionTimeout(10*time.Second),
				kgo.HeartbeatInterval(time.Second),
				kgo.RebalanceTimeout(20*time.Second),
			)...)
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := s.PollRecords(pctx, ctpMaxRecords)
		cancel()
		var in []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) { in = append(in, r) })
		if len(in) == 0 {
			continue
		}
		id := fmt.Sprintf("%s/%d", name, n)
		n++
		h.Add(history.Op{Process: name, Type: history.Invoke, F: history.Txn, Value: id, Client: "kgo"})
		if err := s.Begin(); err != nil {
			endTxn(h, name, id, false, err)
			s.Close()
			s = nil
			continue
		}
		// End does not look at the records: a transaction whose output
		// failed (a delivery timeout while the coordinator was away) would
		// commit its input offsets alone. The first error aborts, as
		// franz-go's exactly-once example does.
		produced := kgo.AbortingFirstErrPromise(s.Client())
		for _, r := range in {
			src := fmt.Sprintf("%d/%d", r.Partition, r.Offset)
			v := fmt.Sprintf("ctp/%s/%s", id, src)
			h.Add(history.Op{Process: name, Type: history.Invoke, F: history.TxnSend, Value: v, Partition: r.Partition % txnPartitions,
				TxnID: id, Source: src, Client: "kgo"})
			s.Produce(context.Background(), &kgo.Record{Partition: r.Partition % txnPartitions, Value: []byte(v)}, produced.Promise())
		}
		perr := produced.Err()
		ectx, cancel := context.WithTimeout(context.Background(), endTimeout)
		committed, err := s.End(ectx, kgo.TransactionEndTry(perr == nil))
		cancel()
		if err == nil && perr != nil {
			err = perr // recorded with the abort
		}
		// End aborts (committed false, no error) when the group rebalanced
		// or we asked it to: aborted for certain. An error after asking to
		// commit is indeterminate.
		endTxn(h, name, id, committed || (perr == nil && err != nil), err)
		if err != nil {
			s.Close()
			s = nil
		}
	}
}

// read is a read_committed consumer of the whole transactional topic.
func (t *Txn) read(ctx context.Context, name string) {
	h := t.env.History
	cl, err := kgo.NewClient(append(commonOpts(t.env.Bootstrap),
		kgo.ConsumeTopics(TxnTopic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
	)...)
	if err != nil {
		return
	}
	defer cl.Close()
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			h.Add(history.Op{Process: name, Type: history.OK, F: history.TxnRead, Partition: r.Partition, Offset: r.Offset,
				Value: string(r.Value), Client: "kgo"})
		})
	}
}

// txnFinalRead is Txn.FinalRead, bounded by d.
func txnFinalRead(ctx context.Context, env Env, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	h := env.History
	fence := ""
	for attempt := 1; fence == "" && ctx.Err() == nil; attempt++ {
		id := fmt.Sprintf("txn-fence/%d", attempt)
		if err := writeFence(ctx, env, id); err == nil {
			fence = id
		}
	}
	if fence == "" {
		return fmt.Errorf("workload: txn final read: no fence committed: %w", ctx.Err())
	}
	cl, err := kgo.NewClient(append(commonOpts(env.Bootstrap),
		kgo.ConsumeTopics(TxnTopic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	pending := map[int32]bool{}
	for p := int32(0); p < txnPartitions; p++ {
		pending[p] = true
	}
	for len(pending) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("workload: txn final read: %d partitions unfinished: %w", len(pending), ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if !pending[r.Partition] {
				return
			}
			v := string(r.Value)
			h.Add(history.Op{Process: "final", Type: history.OK, F: history.TxnFinalRead, Partition: r.Partition, Offset: r.Offset, Value: v})
			if strings.HasPrefix(v, fence+"/") {
				delete(pending, r.Partition)
				h.Add(history.Op{Process: "final", Type: history.OK, F: history.TxnFinalEnd, Partition: r.Partition, Offset: r.Offset + 1})
			}
		})
	}
	return nil
}

// writeFence commits transaction id: one record on every partition.
func writeFence(ctx context.Context, env Env, id string) error {
	h := env.History
	cl, err := kgo.NewClient((&Txn{env: env}).txnOpts("txn-fence")...)
	if err != nil {
		return err
	}
	defer cl.Close()
	h.Add(history.Op{Process: "txn-fence", Type: history.Invoke, F: history.Txn, Value: id, Client: "kgo"})
	if err := cl.BeginTransaction(); err != nil {
		endTxn(h, "txn-fence", id, false, err)
		return err
	}
	recs := make([]*kgo.Record, txnPartitions)
	for p := range recs {
		v := fmt.Sprintf("%s/%d", id, p)
		h.Add(history.Op{Process: "txn-fence", Type: history.Invoke, F: history.TxnSend, Value: v, Partition: int32(p), TxnID: id, Client: "kgo"})
		recs[p] = &kgo.Record{Partition: int32(p), Value: []byte(v)}
	}
	ectx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	commit := ctx.Err() == nil && cl.ProduceSync(ectx, recs...).FirstErr() == nil
	err = cl.EndTransaction(ectx, kgo.TransactionEndTry(commit))
	endTxn(h, "txn-fence", id, commit, err)
	if err == nil && !commit {
		err = fmt.Errorf("workload: fence %s: a record failed", id)
	}
	return err
}
