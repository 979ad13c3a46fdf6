package txn

import (
	"sync/atomic"
	"time"
)

// counter is a monotonically increasing count.
type counter struct{ n atomic.Int64 }

// Inc adds d.
func (c *counter) Inc(d int64) { c.n.Add(d) }

// Metrics are the coordinator's measurements; the broker exports them
// under Kafka's names (Stats).
type Metrics struct {
	loads       atomic.Int64 // partitions loaded
	loadTotalMs atomic.Int64
	loadMaxMs   atomic.Int64
	markersSent counter // partition markers sent (attempts)
	fences      counter // InitProducerId fences of an open transaction
	timedOut    counter // transactions aborted by the timeout scan
	commits     counter // transactions that reached CompleteCommit
	aborts      counter // transactions that reached CompleteAbort
	transitions counter
	// pendingWaits counts requests that waited for an in-flight step
	// instead of answering CONCURRENT_TRANSACTIONS (pending_wait.go).
	pendingWaits counter
}

// observeLoad records one partition load.
func (m *Metrics) observeLoad(d time.Duration) {
	ms := d.Milliseconds()
	m.loads.Add(1)
	m.loadTotalMs.Add(ms)
	for {
		cur := m.loadMaxMs.Load()
		if ms <= cur || m.loadMaxMs.CompareAndSwap(cur, ms) {
			return
		}
	}
}

// transition records a written state change.
func (m *Metrics) transition(_, to State) {
	m.transitions.Inc(1)
	switch to {
	case CompleteCommit:
		m.commits.Inc(1)
	case CompleteAbort:
		m.aborts.Inc(1)
	}
}

// Stats is a snapshot of the coordinator's metrics and sizes.
type Stats struct {
	// PartitionLoadTimeMaxMs and PartitionLoadTimeAvgMs are Kafka's
	// transaction-coordinator-metrics partition-load-time-max/-avg (over
	// the broker's life rather than Kafka's 30 s sample window).
	PartitionLoadTimeMaxMs, PartitionLoadTimeAvgMs int64
	// TransactionalIDs is the number of ids this broker coordinates;
	// Ongoing and Completing (Prepare*) count those states.
	TransactionalIDs, Ongoing, Completing int
	// MarkersSent, Fences, TimedOutAborts, Commits and Aborts are totals.
	MarkersSent, Fences, TimedOutAborts, Commits, Aborts int64
	// UnknownDestinationQueueSize is Kafka's TransactionMarkerChannelManager
	// gauge: marker partitions waiting for a leader (unknown or not live).
	// LogAppendRetryQueueSize: transactions whose markers are all written
	// and whose Complete* append failed and is being retried.
	UnknownDestinationQueueSize, LogAppendRetryQueueSize int
	// PendingWaits counts requests that waited for an in-flight step
	// instead of answering CONCURRENT_TRANSACTIONS (Samsa only).
	PendingWaits int64
}

// Stats returns the current metrics.
func (c *Coordinator) Stats() Stats {
	m := &c.metrics
	s := Stats{PartitionLoadTimeMaxMs: m.loadMaxMs.Load(), MarkersSent: m.markersSent.n.Load(),
		Fences: m.fences.n.Load(), TimedOutAborts: m.timedOut.n.Load(), Commits: m.commits.n.Load(),
		Aborts: m.aborts.n.Load(), PendingWaits: m.pendingWaits.n.Load()}
	if n := m.loads.Load(); n > 0 {
		s.PartitionLoadTimeAvgMs = m.loadTotalMs.Load() / n
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, part := range c.mu.parts {
		for _, md := range part.txns {
			s.TransactionalIDs++
			switch md.state {
			case Ongoing:
				s.Ongoing++
			case PrepareCommit, PrepareAbort:
				s.Completing++
				s.UnknownDestinationQueueSize += md.unknownDest
				if md.appendRetry {
					s.LogAppendRetryQueueSize++
				}
			}
		}
	}
	return s
}
