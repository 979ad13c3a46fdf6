package group

import (
	"context"
	"io"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Coordinator is Kafka's GroupCoordinator for the __consumer_offsets
// partitions this broker leads: it routes each request to its group's
// goroutine, loads partitions on leadership, expires offsets, and stops
// everything on Shutdown. All exported methods are safe for concurrent
// use; the request methods block until the group answers or ctx ends.
type Coordinator struct {
	cfg   Config             // immutable after New
	olog  OffsetLog          // immutable after New
	clock Clock              // immutable after New
	log   logrus.FieldLogger // immutable after New
	// onRebalance is Options.OnRebalance; immutable after New.
	onRebalance func(group string, r Rebalance)
	onGroupGone func(group string) // Options.OnGroupGone; immutable after New
	wg          sync.WaitGroup     // group, loader, append and expiry goroutines
	// queued counts requests handed to group goroutines (tests wait on it
	// to know a parked call has reached its group).
	queued atomic.Int64
	// txnSeqs continues producers' sequences in transactional offset
	// batches (group_txn.go); internally locked.
	txnSeqs txnSequences

	mu struct {
		sync.Mutex
		closed      bool
		partitions  map[int32]*partitionState
		expiryTimer Timer
	}
}

// partitionState is one offsets partition this broker leads.
type partitionState struct {
	epoch   int32
	loading bool
	cancel  context.CancelFunc
	groups  map[string]*group // guarded by Coordinator.mu
}

// NewCoordinator returns a Coordinator that owns no partition yet; call
// BecomeLeader for each offsets partition this broker leads.
func NewCoordinator(opts Options) *Coordinator {
	c := &Coordinator{cfg: opts.Config, olog: opts.Log, clock: opts.Clock, log: opts.Logger, onRebalance: opts.OnRebalance,
		onGroupGone: opts.OnGroupGone}
	if c.clock == nil {
		c.clock = SystemClock{}
	}
	if c.log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		c.log = l
	}
	c.log = c.log.WithField("component", "group")
	if c.cfg.NumPartitions <= 0 {
		c.cfg.NumPartitions = DefaultConfig().NumPartitions
	}
	if c.cfg.RequestChannelSize <= 0 {
		c.cfg.RequestChannelSize = DefaultConfig().RequestChannelSize
	}
	if c.cfg.NewMemberJoinTimeout <= 0 {
		c.cfg.NewMemberJoinTimeout = DefaultConfig().NewMemberJoinTimeout
	}
	if c.cfg.LoadMaxDecompressedBytes <= 0 {
		c.cfg.LoadMaxDecompressedBytes = DefaultConfig().LoadMaxDecompressedBytes
	}
	if c.cfg.LoadBufferSize <= 0 {
		c.cfg.LoadBufferSize = DefaultConfig().LoadBufferSize
	}
	if c.cfg.StormWindow <= 0 {
		c.cfg.StormWindow = DefaultConfig().StormWindow
	}
	if c.cfg.HistorySize <= 0 {
		c.cfg.HistorySize = DefaultConfig().HistorySize
	}
	c.mu.partitions = map[int32]*partitionState{}
	c.mu.Lock()
	c.scheduleExpiryLocked()
	c.mu.Unlock()
	return c
}

// PartitionFor returns the offsets partition of groupID.
func (c *Coordinator) PartitionFor(groupID string) int32 {
	return PartitionFor(groupID, c.cfg.NumPartitions)
}

// goTracked runs f in a goroutine Shutdown waits for. Callers are tracked
// goroutines themselves or hold c.mu with closed false.
func (c *Coordinator) goTracked(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// Shutdown stops every group goroutine (pending calls are answered with
// NOT_COORDINATOR), cancels loads and the expiry timer, and waits for all
// goroutines to exit.
func (c *Coordinator) Shutdown() {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		c.wg.Wait()
		return
	}
	c.mu.closed = true
	if c.mu.expiryTimer != nil {
		c.mu.expiryTimer.Stop()
	}
	var stop []*group
	for p, ps := range c.mu.partitions {
		stop = append(stop, c.dropPartitionLocked(p, ps)...)
	}
	c.mu.Unlock()
	for _, g := range stop {
		g.stop(kerr.NotCoordinator.Code)
	}
	c.wg.Wait()
}

// dropPartitionLocked forgets partition p and returns its groups to stop.
func (c *Coordinator) dropPartitionLocked(p int32, ps *partitionState) []*group {
	delete(c.mu.partitions, p)
	if ps.cancel != nil {
		ps.cancel()
	}
	out := make([]*group, 0, len(ps.groups))
	for _, g := range ps.groups {
		out = append(out, g)
	}
	return out
}

// groupExited is called by a group goroutine as it exits.
func (c *Coordinator) groupExited(g *group) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps := c.mu.partitions[g.partition]; ps != nil && ps.groups[g.id] == g {
		delete(ps.groups, g.id)
	}
}

// lookup returns the live group id, creating it when create is set. The
// code is NOT_COORDINATOR when this broker does not lead the group's
// partition, COORDINATOR_LOAD_IN_PROGRESS while it loads and
// COORDINATOR_NOT_AVAILABLE after Shutdown. A nil group with code 0 means
// the group does not exist.
func (c *Coordinator) lookup(id string, create bool) (*group, int16) {
	p := c.PartitionFor(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	ps := c.mu.partitions[p]
	switch {
	case ps == nil:
		return nil, kerr.NotCoordinator.Code
	case ps.loading:
		return nil, kerr.CoordinatorLoadInProgress.Code
	}
	g := ps.groups[id]
	if g != nil && g.stopOnce.Load() {
		g = nil
	}
	if g == nil && create {
		g = newGroup(c, id, p)
		ps.groups[id] = g
		c.goTracked(g.run)
	}
	return g, 0
}

// validGroupID: Kafka's isValidGroupId; OffsetCommit, OffsetFetch,
// DescribeGroups and DeleteGroups accept the empty id of old consumers.
func validGroupID(id string, allowEmpty bool) bool {
	return len(id) <= maxStringLen && (allowEmpty || id != "")
}

// ListGroups returns the groups this broker coordinates, filtered by
// state names when states is non-empty (ListGroups v4, KIP-518). The code
// is COORDINATOR_LOAD_IN_PROGRESS while any partition loads (the listing
// is then partial) and COORDINATOR_NOT_AVAILABLE after Shutdown.
func (c *Coordinator) ListGroups(states []string) (int16, []GroupListing) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	var code int16
	var out []GroupListing
	for _, ps := range c.mu.partitions {
		if ps.loading {
			code = kerr.CoordinatorLoadInProgress.Code
		}
		for id, g := range ps.groups {
			s := g.snapshot.Load()
			if s.state == Dead || (len(states) > 0 && !containsString(states, s.state.String())) {
				continue
			}
			out = append(out, GroupListing{Group: id, ProtocolType: s.protocolType, State: s.state.String()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return code, out
}
