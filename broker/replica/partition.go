package replica

import (
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/storage"
	"samsa/kafka"
)

// followerState is what the leader knows of one follower replica, learnt
// from its fetches (Kafka's Replica on the leader).
type followerState struct {
	// leo is the follower's log end offset: the offset of its last fetch.
	// -1 until the first fetch after this broker became leader.
	leo int64
	// lastFetch is when the follower last fetched.
	lastFetch time.Time
	// lastCaughtUp is the last time the follower had fetched up to the
	// leader's log end offset (used by the ISR shrink rule,
	// replica.lag.time.max.ms).
	lastCaughtUp time.Time
	// logStart is the follower's log start offset from its last fetch
	// (Fetch v5+), -1 when unknown; it bounds the low watermark
	// DeleteRecords waits for.
	logStart int64
}

// Partition is this broker's replica of one partition (Kafka's
// cluster.Partition). Its state changes under mu; see the package doc.
type Partition struct {
	tp  kafka.TopicPartition // immutable
	m   *Manager             // immutable
	log logrus.FieldLogger

	mu struct {
		sync.RWMutex
		leader          int32 // -1 when unknown
		leaderEpoch     int32 // -1 before the first LeaderAndIsr
		controllerEpoch int32
		zkVersion       int32
		isr             []int32
		replicas        []int32
		// followers is set while this broker leads: one entry per other
		// assigned replica.
		followers map[int32]*followerState
		data      *storage.Log // nil until the first LeaderAndIsr opened it
		minISR    int          // min.insync.replicas of the topic
		// epochStartOffset is the log end offset when this broker became
		// leader in the current epoch; a follower rejoins the ISR only past it.
		epochStartOffset int64
		// isrShrinking is set while a shrink's ZooKeeper write is in
		// flight without mu (isr_shrink.go); no other ISR change starts.
		isrShrinking bool
		// expandDeferred are the followers whose expansion found a
		// shrink in flight; the shrink queues them again when it ends.
		expandDeferred []int32
	}
	// progress guards the fields of every followerState and serialises
	// high-watermark moves, which happen under mu held for reading
	// (appends, follower fetches). Lock order: mu -> progress -> the log.
	progress sync.Mutex
	// knownEnd is the log end the last high-watermark check saw (guarded
	// by progress; isr_caught_up.go).
	knownEnd int64
}

func newPartition(m *Manager, tp kafka.TopicPartition) *Partition {
	p := &Partition{tp: tp, m: m,
		log: m.log.WithFields(logrus.Fields{"topic": tp.Topic, "partition": tp.Partition})}
	p.mu.leader = -1
	p.mu.leaderEpoch = -1
	p.mu.minISR = 1
	return p
}

// TopicPartition returns the partition's name.
func (p *Partition) TopicPartition() kafka.TopicPartition { return p.tp }

// State is a copy of a partition's replication state.
type State struct {
	Leader         int32
	LeaderEpoch    int32
	ISR            []int32
	Replicas       []int32
	IsLeader       bool
	HighWatermark  int64
	LogEndOffset   int64
	LogStartOffset int64
}

// State returns a snapshot of the partition's state.
func (p *Partition) State() State {
	p.mu.RLock()
	defer p.mu.RUnlock()
	s := State{Leader: p.mu.leader, LeaderEpoch: p.mu.leaderEpoch,
		ISR: slices.Clone(p.mu.isr), Replicas: slices.Clone(p.mu.replicas),
		IsLeader: p.mu.leader == p.m.cfg.BrokerID, HighWatermark: -1, LogEndOffset: -1, LogStartOffset: -1}
	if l := p.mu.data; l != nil {
		s.HighWatermark, s.LogEndOffset, s.LogStartOffset = l.HighWatermark(), l.LogEndOffset(), l.LogStartOffset()
	}
	return s
}

// Log returns the partition's log, or nil if it was never opened.
func (p *Partition) Log() *storage.Log {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.mu.data
}

// makeLeaderLocked applies a LeaderAndIsr state that names this broker as
// leader (Kafka Partition.makeLeader).
func (p *Partition) makeLeaderLocked(ps PartitionState, now time.Time) error {
	wasLeader := p.mu.leader == p.m.cfg.BrokerID
	p.setStateLocked(ps)
	leo := p.mu.data.LogEndOffset()
	// The new epoch starts at the current log end (KIP-101).
	if err := p.mu.data.LeaderEpochCache().Assign(ps.LeaderEpoch, leo); err != nil {
		return err
	}
	followers := make(map[int32]*followerState, len(ps.Replicas))
	for _, id := range ps.Replicas {
		if id == p.m.cfg.BrokerID {
			continue
		}
		fs := &followerState{leo: -1, logStart: -1}
		if old, ok := p.mu.followers[id]; ok && wasLeader {
			fs.leo = old.leo
			fs.lastFetch = old.lastFetch
			fs.logStart = old.logStart
		}
		if slices.Contains(ps.ISR, id) {
			// Kafka resets an ISR member's caught-up time on leadership
			// change so it is not dropped before it could fetch.
			fs.lastCaughtUp = now
		}
		followers[id] = fs
	}
	p.mu.followers = followers
	p.mu.epochStartOffset = leo
	p.knownEnd = leo // mu is held for writing: no one holds progress
	p.maybeIncrementHighWatermarkLocked()
	p.log.WithFields(logrus.Fields{"leader_epoch": ps.LeaderEpoch, "isr": ps.ISR,
		"log_end_offset": leo}).Info("became leader")
	return nil
}

// makeFollowerLocked applies a state that names another broker as leader.
func (p *Partition) makeFollowerLocked(ps PartitionState) {
	p.setStateLocked(ps)
	p.mu.followers = nil
	p.log.WithFields(logrus.Fields{"leader": ps.Leader, "leader_epoch": ps.LeaderEpoch}).
		Info("became follower")
}

func (p *Partition) setStateLocked(ps PartitionState) {
	p.mu.leader = ps.Leader
	p.mu.leaderEpoch = ps.LeaderEpoch
	p.mu.controllerEpoch = ps.ControllerEpoch
	p.mu.zkVersion = ps.ZkVersion
	p.mu.isr = slices.Clone(ps.ISR)
	p.mu.replicas = slices.Clone(ps.Replicas)
}

// isLeaderLocked reports whether this broker leads the partition.
func (p *Partition) isLeaderLocked() bool {
	return p.mu.leader == p.m.cfg.BrokerID && p.mu.data != nil
}

// maybeIncrementHighWatermarkLocked advances the high watermark to the
// smallest log end offset among the ISR members (Kafka
// Partition.maybeIncrementLeaderHW). A follower in the ISR that has not
// fetched since this broker became leader holds the HW where it is: the
// HW never passes what every ISR member has. It never moves backwards. It
// reports whether it moved; the caller notifies the purgatories.
// The caller holds mu (read or write); this takes progress.
func (p *Partition) maybeIncrementHighWatermarkLocked() bool {
	if !p.isLeaderLocked() {
		return false
	}
	p.progress.Lock()
	defer p.progress.Unlock()
	l := p.mu.data
	hw := l.LogEndOffset()
	p.caughtUpUntilLocked(hw)
	for _, id := range p.mu.isr {
		if id == p.m.cfg.BrokerID {
			continue
		}
		fs, ok := p.mu.followers[id]
		if !ok || fs.leo < 0 {
			// No fetch yet: keep the HW where it is.
			return false
		}
		hw = min(hw, fs.leo)
	}
	if hw > l.HighWatermark() {
		l.SetHighWatermark(hw)
		return true
	}
	return false
}
