package metadata

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// LeaderDuringDelete is the leader id the controller sends in UpdateMetadata
// for partitions of a topic being deleted (Kafka's LeaderDuringDelete); the
// cache drops such partitions.
const LeaderDuringDelete = -2

// NoLeader is the leader id of a partition without a leader.
const NoLeader = -1

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Listener         string // listener name, e.g. "PLAINTEXT"
	Host             string
	Port             int32
	SecurityProtocol int16 // Kafka's SecurityProtocol id (0 = PLAINTEXT)
}

// Broker is a live broker as the controller described it.
type Broker struct {
	ID        int32
	Rack      *string // nil when broker.rack is unset
	Endpoints []Endpoint
}

// Endpoint returns the broker's endpoint for listener, if it has one.
func (b Broker) Endpoint(listener string) (Endpoint, bool) {
	for _, e := range b.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

// PartitionState is the controller's view of one partition.
type PartitionState struct {
	Topic           string
	Partition       int32
	ControllerEpoch int32
	Leader          int32
	LeaderEpoch     int32
	ISR             []int32
	ZkVersion       int32
	Replicas        []int32
	OfflineReplicas []int32
}

// Update is the content of one UpdateMetadata request.
type Update struct {
	ControllerID    int32
	ControllerEpoch int32
	LiveBrokers     []Broker
	// Partitions replace the cached state of the partitions they name; a
	// Leader of LeaderDuringDelete removes the partition (and the topic once
	// it has no partitions left).
	Partitions []PartitionState
	// TopicIDs are the topic ids (KIP-516) the controller sent; a zero id
	// leaves a known one unchanged.
	TopicIDs map[string][16]byte
}

// Snapshot is an immutable view of the cache. Callers must not modify it or
// anything it points to.
type Snapshot struct {
	ControllerID    int32 // -1 when unknown
	ControllerEpoch int32
	Brokers         map[int32]Broker
	BrokerIDs       []int32 // sorted ids of Brokers
	Topics          map[string]map[int32]PartitionState
	TopicIDs        map[string][16]byte // ids of cached topics; absent = unknown
}

// Partition returns the state of topic-partition tp.
func (s *Snapshot) Partition(topic string, partition int32) (PartitionState, bool) {
	ps, ok := s.Topics[topic][partition]
	return ps, ok
}

// TopicNames returns the cached topic names, sorted.
func (s *Snapshot) TopicNames() []string {
	names := make([]string, 0, len(s.Topics))
	for t := range s.Topics {
		names = append(names, t)
	}
	sort.Strings(names)
	return names
}

// Partitions returns topic's partitions ordered by index.
func (s *Snapshot) Partitions(topic string) []PartitionState {
	ps := make([]PartitionState, 0, len(s.Topics[topic]))
	for _, p := range s.Topics[topic] {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition })
	return ps
}

// Alive reports whether broker id is live.
func (s *Snapshot) Alive(id int32) bool {
	_, ok := s.Brokers[id]
	return ok
}

// Cache is the metadata cache. The zero value is not usable; use New.
type Cache struct {
	snap atomic.Pointer[Snapshot]
	mu   sync.Mutex // serialises Apply
}

// New returns an empty cache (no brokers, no topics, controller -1).
func New() *Cache {
	c := &Cache{}
	c.snap.Store(&Snapshot{
		ControllerID: -1,
		Brokers:      map[int32]Broker{},
		Topics:       map[string]map[int32]PartitionState{},
		TopicIDs:     map[string][16]byte{},
	})
	return c
}

// Snapshot returns the current snapshot. It never blocks.
func (c *Cache) Snapshot() *Snapshot { return c.snap.Load() }

// Apply installs u: the live broker set is replaced, the named partitions are
// replaced or deleted, every other partition is kept. It returns the
// partitions that were deleted.
func (c *Cache) Apply(u Update) (deleted []PartitionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.snap.Load()
	next := &Snapshot{
		ControllerID:    u.ControllerID,
		ControllerEpoch: u.ControllerEpoch,
		Brokers:         make(map[int32]Broker, len(u.LiveBrokers)),
		Topics:          make(map[string]map[int32]PartitionState, len(old.Topics)),
		TopicIDs:        make(map[string][16]byte, len(old.TopicIDs)),
	}
	for _, b := range u.LiveBrokers {
		b.Endpoints = slices.Clone(b.Endpoints)
		next.Brokers[b.ID] = b
		next.BrokerIDs = append(next.BrokerIDs, b.ID)
	}
	slices.Sort(next.BrokerIDs)
	next.BrokerIDs = slices.Compact(next.BrokerIDs)
	for t, ps := range old.Topics {
		next.Topics[t] = ps // shared until a partition of t changes
	}
	copied := map[string]bool{}
	for _, ps := range u.Partitions {
		if !copied[ps.Topic] {
			m := make(map[int32]PartitionState, len(next.Topics[ps.Topic])+1)
			for k, v := range next.Topics[ps.Topic] {
				m[k] = v
			}
			next.Topics[ps.Topic] = m
			copied[ps.Topic] = true
		}
		if ps.Leader == LeaderDuringDelete {
			if prev, ok := next.Topics[ps.Topic][ps.Partition]; ok {
				deleted = append(deleted, prev)
			}
			delete(next.Topics[ps.Topic], ps.Partition)
			continue
		}
		ps.ISR = slices.Clone(ps.ISR)
		ps.Replicas = slices.Clone(ps.Replicas)
		ps.OfflineReplicas = slices.Clone(ps.OfflineReplicas)
		next.Topics[ps.Topic][ps.Partition] = ps
	}
	for t, id := range old.TopicIDs {
		next.TopicIDs[t] = id
	}
	for t, id := range u.TopicIDs {
		if id != ([16]byte{}) {
			next.TopicIDs[t] = id
		}
	}
	for t := range copied {
		if len(next.Topics[t]) == 0 {
			delete(next.Topics, t)
			delete(next.TopicIDs, t)
		}
	}
	c.snap.Store(next)
	return deleted
}
