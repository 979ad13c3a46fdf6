package txn

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Config is the coordinator's share of the broker configuration.
type Config struct {
	NumPartitions  int32         // transaction.state.log.num.partitions
	MaxTimeout     time.Duration // transaction.max.timeout.ms
	IDExpiration   time.Duration // transactional.id.expiration.ms
	AbortInterval  time.Duration // transaction.abort.timed.out.transaction.cleanup.interval.ms
	RemoveInterval time.Duration // transaction.remove.expired.transaction.cleanup.interval.ms
	LoadBufferSize int           // transaction.state.log.load.buffer.size
	// RetryBackoff is the pause between marker rounds that left partitions
	// without their marker (Kafka retries on its sender thread's next loop,
	// after reconnect.backoff.ms for a lost connection).
	RetryBackoff time.Duration
	// LoadMaxDecompressedBytes bounds one batch's decompression on load.
	LoadMaxDecompressedBytes int
	// PendingWait is how long a request that would answer
	// CONCURRENT_TRANSACTIONS waits for the id's in-flight step first
	// (pending_wait.go); 0 answers at once, as Kafka 2.8.
	PendingWait time.Duration
}

// DefaultConfig returns Kafka 2.8's defaults (and Samsa's PendingWait).
func DefaultConfig() Config {
	return Config{NumPartitions: 50, MaxTimeout: 15 * time.Minute, IDExpiration: 7 * 24 * time.Hour,
		AbortInterval: 10 * time.Second, RemoveInterval: time.Hour, LoadBufferSize: 5 << 20,
		RetryBackoff: 100 * time.Millisecond, LoadMaxDecompressedBytes: 64 << 20,
		PendingWait: time.Second}
}

// Options are NewCoordinator's arguments.
type Options struct {
	Config  Config
	Log     Log
	Markers MarkerWriter
	// NewProducerID hands out an unused producer id (the broker's
	// ZooKeeper block allocator). It may block.
	NewProducerID func() (int64, error)
	// PartitionFor maps an id to its __transaction_state partition (the
	// group coordinator's Java-hash helper, so both agree with Kafka).
	PartitionFor func(id string, numPartitions int32) int32
	Now          func() time.Time // nil: time.Now
	Logger       logrus.FieldLogger
}

// Coordinator is the transaction coordinator of one broker: the state of
// the transactional ids whose __transaction_state partition it leads.
// All methods are safe for concurrent use.
type Coordinator struct {
	cfg     Config                // immutable
	log     Log                   // immutable
	markers MarkerWriter          // immutable
	newPID  func() (int64, error) // immutable
	partFor func(string, int32) int32
	now     func() time.Time
	lg      logrus.FieldLogger
	ctx     context.Context // done at Shutdown
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	metrics Metrics
	// loopEndHook, when set (tests), runs in every marker loop between
	// its transaction's completion and the loop's end.
	loopEndHook atomic.Pointer[func()]
	mu          struct {
		sync.Mutex
		parts  map[int32]*partition // guarded by mu
		closed bool                 // guarded by mu
	}
}

// partition is one __transaction_state partition this broker leads.
type partition struct {
	epoch   int32 // coordinator epoch: the partition's leader epoch; immutable
	loading bool  // guarded by Coordinator.mu
	txns    map[string]*metadata
	ctx     context.Context // done when the partition is resigned
	cancel  context.CancelFunc
}

// NewCoordinator returns a coordinator owning no partition and starts
// its abort and expiry timers; Shutdown stops them.
func NewCoordinator(o Options) *Coordinator {
	c := &Coordinator{cfg: o.Config, log: o.Log, markers: o.Markers, newPID: o.NewProducerID,
		partFor: o.PartitionFor, now: o.Now, lg: o.Logger}
	if c.now == nil {
		c.now = time.Now
	}
	if c.lg == nil {
		c.lg = logrus.StandardLogger()
	}
	c.lg = c.lg.WithField("component", "txn-coordinator")
	c.mu.parts = map[int32]*partition{}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.goTracked(func() { c.every(c.cfg.AbortInterval, c.abortTimedOut) })
	c.goTracked(func() { c.every(c.cfg.RemoveInterval, c.removeExpired) })
	return c
}

// PartitionFor returns the __transaction_state partition of id.
func (c *Coordinator) PartitionFor(id string) int32 { return c.partFor(id, c.cfg.NumPartitions) }

// goTracked runs f on a goroutine Shutdown waits for.
func (c *Coordinator) goTracked(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// every calls f each d until Shutdown.
func (c *Coordinator) every(d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// Shutdown drops every partition and waits for the coordinator's
// goroutines (loads, marker loops, timers) to end.
func (c *Coordinator) Shutdown() {
	c.mu.Lock()
	c.mu.closed = true
	for p, part := range c.mu.parts {
		part.cancel()
		delete(c.mu.parts, p)
	}
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}

// BecomeLeader tells the coordinator this broker leads __transaction_state
// partition p at leader epoch epoch (the coordinator epoch). It loads the
// partition in the background: meanwhile its ids answer
// COORDINATOR_LOAD_IN_PROGRESS. A newer epoch replaces the old state and
// reloads (Kafka reloads on every election).
func (c *Coordinator) BecomeLeader(p, epoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed || p < 0 || p >= c.cfg.NumPartitions {
		return
	}
	if old := c.mu.parts[p]; old != nil {
		if old.epoch >= epoch {
			return
		}
		old.cancel()
	}
	ctx, cancel := context.WithCancel(c.ctx)
	part := &partition{epoch: epoch, loading: true, txns: map[string]*metadata{}, ctx: ctx, cancel: cancel}
	c.mu.parts[p] = part
	c.goTracked(func() { c.load(p, part) })
}

// Resign tells the coordinator this broker no longer leads partition p:
// its state and marker loops are dropped (NOT_COORDINATOR from now on).
// A resignation older than the epoch BecomeLeader recorded is ignored;
// epoch -1 resigns unconditionally.
func (c *Coordinator) Resign(p, epoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	part := c.mu.parts[p]
	if part == nil || (epoch >= 0 && epoch < part.epoch) {
		return
	}
	part.cancel()
	delete(c.mu.parts, p)
	c.lg.WithFields(logrus.Fields{"partition": p, "ids": len(part.txns)}).Info("txn: unloaded transaction state partition")
}

// ownerLocked returns the partition of id, or NOT_COORDINATOR /
// COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) ownerLocked(id string) (int32, *partition, int16) {
	p := c.PartitionFor(id)
	part := c.mu.parts[p]
	switch {
	case part == nil:
		return p, nil, kerr.NotCoordinator.Code
	case part.loading:
		return p, nil, kerr.CoordinatorLoadInProgress.Code
	}
	return p, part, 0
}

// Owned reports whether this broker coordinates partition p and whether
// it is still loading it.
func (c *Coordinator) Owned(p int32) (owned, loading bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	part := c.mu.parts[p]
	return part != nil, part != nil && part.loading
}

// appendCode maps a Log.Append error to the code a client gets (Kafka's
// TransactionStateManager.appendTransactionToLog).
func appendCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNotLeader):
		return kerr.NotCoordinator.Code
	case errors.Is(err, ErrNotEnoughReplicas), errors.Is(err, ErrTimeout), errors.Is(err, ErrUnknownPartition):
		return kerr.CoordinatorNotAvailable.Code
	}
	return kerr.UnknownServerError.Code
}
