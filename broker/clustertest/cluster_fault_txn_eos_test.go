package clustertest_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// Exactly-once end to end: franz-go's GroupTransactSession consumes
// eos-in, produces each record to the same partition of eos-out and
// commits the consumed offsets in the same transaction, on three broker
// processes (RF 3, min.insync.replicas 2, __transaction_state and
// __consumer_offsets RF 3), while (a) the transaction coordinator's broker
// is SIGKILLed as a commit starts and restarted, (b) the leader of an
// eos-out partition is SIGKILLed as a commit starts and restarted, (c) the
// transformer is abandoned with a transaction open and a new session
// with the same transactional id takes over (the zombie's commit is
// refused). A read_committed consumer then sees every input value exactly
// once, and the group's committed offsets equal the input's end offsets.
//
// N is 5,000 records; SAMSA_EOS_RECORDS sets another count (the issue's
// 50,000: SAMSA_EOS_RECORDS=50000).

const (
	eosIn    = "eos-in"
	eosOut   = "eos-out"
	eosGroup = "eos-g"
	eosTxnID = "eos-tx"
	eosParts = 3
	// unlimited lifts the transformer's budget: the last step may count
	// fewer committed records than n, when an End's answer was lost but
	// its transaction committed.
	unlimited = int64(1) << 62
)

func eosRecords(t *testing.T) int {
	n := 5000
	if s := os.Getenv("SAMSA_EOS_RECORDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 100 || v > 1_000_000 {
			t.Fatalf("SAMSA_EOS_RECORDS=%q: want 100..1000000", s)
		}
		n = v
	}
	return n
}

// eosTransformer runs consume-transform-produce sessions one after
// another: a session whose End fails is closed and replaced, as a
// restarted process would be.
type eosTransformer struct {
	t     *testing.T
	addrs []string

	committed atomic.Int64 // records in transactions End reported committed
	// budget gates the loop: it polls only while committed < budget, so
	// each fault lands mid-run however fast the machine is; raise wakes it.
	budget atomic.Int64
	raise  chan struct{}
	// armed makes the next End signal ending first (fault injection
	// "as a commit starts").
	armed  atomic.Bool
	ending chan struct{}
	// abandon makes the loop hand its session, with a transaction open
	// and records produced, to abandoned and return.
	abandon   atomic.Bool
	abandoned chan *kgo.GroupTransactSession

	errs atomic.Int64 // sessions replaced after an error
	last atomic.Value // string: last error
}

func (w *eosTransformer) session() (*kgo.GroupTransactSession, error) {
	return kgo.NewGroupTransactSession(
		kgo.SeedBrokers(w.addrs...),
		kgo.TransactionalID(eosTxnID),
		kgo.TransactionTimeout(30*time.Second),
		kgo.ConsumerGroup(eosGroup),
		kgo.ConsumeTopics(eosIn),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.SessionTimeout(10*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RetryTimeout(20*time.Second),
	)
}

// run loops until ctx ends or the session is abandoned; sess may be nil.
func (w *eosTransformer) run(ctx context.Context, sess *kgo.GroupTransactSession) {
	defer func() {
		if sess != nil {
			sess.Close()
		}
	}()
	fail := func(err error) {
		w.errs.Add(1)
		w.last.Store(err.Error())
		if sess != nil {
			sess.Close()
		}
		sess = nil
	}
	for ctx.Err() == nil {
		for w.committed.Load() >= w.budget.Load() {
			select {
			case <-w.raise:
			case <-ctx.Done():
				return
			}
		}
		if sess == nil {
			s, err := w.session()
			if err != nil {
				w.t.Errorf("new session: %v", err)
				return
			}
			sess = s
		}
		fetches := sess.PollRecords(ctx, 500)
		if ctx.Err() != nil {
			return
		}
		if fetches.IsClientClosed() {
			sess = nil
			continue
		}
		var out []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			out = append(out, &kgo.Record{Topic: eosOut, Partition: r.Partition, Key: r.Key, Value: r.Value})
		})
		if len(out) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			fail(fmt.Errorf("begin: %w", err))
			continue
		}
		produced := sess.ProduceSync(ctx, out...).FirstErr() == nil
		if produced && w.abandon.Load() {
			w.abandoned <- sess
			sess = nil
			return
		}
		if w.armed.CompareAndSwap(true, false) {
			w.ending <- struct{}{}
		}
		committed, err := sess.End(ctx, kgo.TransactionEndTry(produced))
		if committed {
			w.committed.Add(int64(len(out)))
		}
		if err != nil {
			fail(fmt.Errorf("end: %w", err))
		}
	}
}

// allow lets the loop go on until n records are committed.
func (w *eosTransformer) allow(n int64) {
	w.budget.Store(n)
	select {
	case w.raise <- struct{}{}:
	default:
	}
}

// waitCommitted lets the loop commit at least n records and waits for them.
func (w *eosTransformer) waitCommitted(t *testing.T, n int64, timeout time.Duration) {
	t.Helper()
	w.allow(n)
	txnWait(t, timeout, fmt.Sprintf("%d records committed", n), func() (bool, string) {
		last, _ := w.last.Load().(string)
		return w.committed.Load() >= n, fmt.Sprintf("%d committed, %d session errors, last %q", w.committed.Load(), w.errs.Load(), last)
	})
}

func TestClusterFaultTxnExactlyOnce(t *testing.T) {
	n := eosRecords(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, adm, in, ends := eosStart(t, ctx, n)
	kadmin := kadm.NewClient(adm)

	w := &eosTransformer{t: t, addrs: c.Addrs(), ending: make(chan struct{}, 1), raise: make(chan struct{}, 1), abandoned: make(chan *kgo.GroupTransactSession, 1)}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	start := func(sess *kgo.GroupTransactSession) {
		wg.Add(1)
		go func() { defer wg.Done(); w.run(runCtx, sess) }()
	}
	start(nil)
	step := int64(n / 5)

	// (a) the coordinator's broker dies as a commit starts.
	w.waitCommitted(t, step, 90*time.Second)
	coord := txnCoordinatorIndex(t, c, adm, eosTxnID, -1)
	w.killAsCommitStarts(ctx, c, coord)
	t.Logf("coordinator broker %d killed and restarted at %d committed", c.ID(coord), w.committed.Load())

	// (b) an eos-out leader dies as a commit starts.
	w.waitCommitted(t, w.committed.Load()+step, 90*time.Second)
	st, err := c.PartitionState(eosOut, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.killAsCommitStarts(ctx, c, c.Index(st.Leader))
	t.Logf("%s-1 leader %d killed and restarted at %d committed", eosOut, st.Leader, w.committed.Load())

	// (c) the transformer is abandoned mid-transaction; a new instance
	// with the same transactional id fences it.
	w.waitCommitted(t, w.committed.Load()+step, 90*time.Second)
	w.abandon.Store(true)
	w.allow(unlimited)
	var zombie *kgo.GroupTransactSession
	select {
	case zombie = <-w.abandoned:
	case <-ctx.Done():
		t.Fatal("the transformer was never abandoned")
	}
	wg.Wait()
	w.abandon.Store(false)
	start(w.fenceZombie(ctx, zombie))

	// Done when the group's committed offsets reach the input's ends.
	w.waitOffsetsAt(ctx, kadmin, ends)
	stop()
	wg.Wait()
	eosCheckOutput(t, ctx, c, in)
	t.Logf("%d records exactly once; %d transformer sessions replaced after errors", n, w.errs.Load())
}

// eosStart starts the three broker processes with both topics fully
// replicated and produces the n input records: the cluster, a client
// of it, the records and the input's end offsets.
func eosStart(t *testing.T, ctx context.Context, n int) (*brokertest.ProcCluster, *kgo.Client, []*kgo.Record, kadm.ListedOffsets) {
	t.Helper()
	c := brokertest.NewProcCluster(t, 3, faultProps(
		"transaction.state.log.num.partitions", "3",
		"transaction.state.log.replication.factor", "3",
		"transaction.state.log.min.isr", "2",
		"offsets.topic.num.partitions", "3",
		"offsets.topic.replication.factor", "3",
	)...)
	c.CreateTopic(t, eosIn, eosParts, 3, nil)
	c.CreateTopic(t, eosOut, eosParts, 3, nil)
	for p := int32(0); p < eosParts; p++ {
		c.WaitForISR(t, eosIn, p, 3, 30*time.Second)
		c.WaitForISR(t, eosOut, p, 3, 30*time.Second)
	}
	adm, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(adm.Close)
	var in []*kgo.Record
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("in-%07d", i)
		in = append(in, &kgo.Record{Topic: eosIn, Partition: int32(i % eosParts), Key: []byte(v), Value: []byte(v)})
	}
	if err := adm.ProduceSync(ctx, in...).FirstErr(); err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	ends, err := kadm.NewClient(adm).ListEndOffsets(ctx, eosIn)
	if err != nil || ends.Error() != nil {
		t.Fatalf("input end offsets: %v %v", err, ends.Error())
	}
	return c, adm, in, ends
}

// killAsCommitStarts lets the loop run until a commit starts, then
// SIGKILLs broker x and restarts it while that commit goes on; no new
// commit starts until the next step.
func (w *eosTransformer) killAsCommitStarts(ctx context.Context, c *brokertest.ProcCluster, x int) {
	w.t.Helper()
	w.armed.Store(true)
	w.allow(unlimited)
	select {
	case <-w.ending:
	case <-ctx.Done():
		w.t.Fatal("no commit started")
	}
	w.allow(0) // the commit in flight goes on; no new one until the next step
	c.Kill(x)
	c.Start(x)
}

// fenceZombie starts a new session with the zombie's transactional id
// (InitProducerId bumps the epoch), checks that the zombie's commit is
// refused, and returns the successor, its first transaction ended and the
// loop's budget lifted.
func (w *eosTransformer) fenceZombie(ctx context.Context, zombie *kgo.GroupTransactSession) *kgo.GroupTransactSession {
	t := w.t
	t.Helper()
	successor, err := w.session()
	if err != nil {
		t.Fatal(err)
	}
	if err := successor.Begin(); err != nil { // InitProducerId: bumps the epoch
		t.Fatalf("successor begin: %v", err)
	}
	zctx, zcancel := context.WithTimeout(ctx, 60*time.Second)
	committed, zerr := zombie.End(zctx, kgo.TryCommit)
	zcancel()
	if committed {
		t.Fatal("the zombie's transaction committed after a new instance with its transactional id started")
	}
	t.Logf("zombie refused: %v", zerr)
	zombie.Close()
	if _, err := successor.End(ctx, kgo.TryAbort); err != nil {
		t.Fatalf("successor's empty transaction: %v", err)
	}
	w.allow(unlimited)
	return successor
}

// waitOffsetsAt waits until the group's committed offsets equal the
// input's end offsets.
func (w *eosTransformer) waitOffsetsAt(ctx context.Context, kadmin *kadm.Client, ends kadm.ListedOffsets) {
	w.t.Helper()
	txnWait(w.t, 3*time.Minute, "committed offsets at the input end offsets", func() (bool, string) {
		fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
		defer fcancel()
		got, err := kadmin.FetchOffsets(fctx, eosGroup)
		if err != nil {
			return false, err.Error()
		}
		for p := int32(0); p < eosParts; p++ {
			o, ok := got.Lookup(eosIn, p)
			if want := ends[eosIn][p].Offset; !ok || o.Err != nil || o.At != want {
				last, _ := w.last.Load().(string)
				return false, fmt.Sprintf("partition %d at %d (%v), end %d; %d committed records, last session error %q", p, o.At, o.Err, want, w.committed.Load(), last)
			}
		}
		return true, ""
	})
}

// eosCheckOutput writes a sentinel transaction per output partition (a
// read_committed consumer that has seen it has seen every committed
// record before it) and checks that read_committed sees every input value
// exactly once.
func eosCheckOutput(t *testing.T, ctx context.Context, c *brokertest.ProcCluster, in []*kgo.Record) {
	t.Helper()
	endCl := txnClient(t, c, "eos-end", eosOut)
	if err := endCl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < eosParts; p++ {
		if err := endCl.ProduceSync(ctx, &kgo.Record{Topic: eosOut, Partition: p, Value: []byte("END")}).FirstErr(); err != nil {
			t.Fatalf("sentinel: %v", err)
		}
	}
	if err := endCl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("sentinel commit: %v", err)
	}
	seen := eosReadCommitted(t, ctx, c.Addrs())
	missing, dups := 0, 0
	for _, r := range in {
		switch seen[string(r.Value)] {
		case 0:
			missing++
		case 1:
		default:
			dups++
		}
	}
	if n := len(in); missing > 0 || dups > 0 || len(seen) != n {
		t.Fatalf("read_committed output: %d distinct values of %d, %d missing, %d duplicated", len(seen), n, missing, dups)
	}
}

// eosReadCommitted counts each value of eos-out a read_committed consumer
// sees before each partition's END sentinel.
func eosReadCommitted(t *testing.T, ctx context.Context, addrs []string) map[string]int {
	t.Helper()
	rc, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(eosOut),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	seen := map[string]int{}
	done := map[int32]bool{}
	for len(done) < eosParts {
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v (%d values, %d sentinels)", eosOut, ctx.Err(), len(seen), len(done))
		}
		fetches := rc.PollFetches(ctx)
		fetches.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == "END" {
				done[r.Partition] = true
				return
			}
			if !done[r.Partition] {
				seen[string(r.Value)]++
			}
		})
	}
	return seen
}
