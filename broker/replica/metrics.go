package replica

import "samsa/kafka"

// IsrListener is told of every ISR change this broker makes as a leader
// (the broker marks Kafka's ReplicaManager IsrShrinksPerSec and
// IsrExpandsPerSec meters with it). Its methods are called with the
// partition's lock held: they must be quick and must not call back into
// the Manager.
type IsrListener interface {
	IsrShrunk(tp kafka.TopicPartition)
	IsrExpanded(tp kafka.TopicPartition)
}

// isrListenerBox lets an interface value live in an atomic.Pointer.
type isrListenerBox struct{ l IsrListener }

// SetIsrListener installs l (nil removes it). Safe to call at any time,
// also while the ISR loop runs.
func (m *Manager) SetIsrListener(l IsrListener) {
	if l == nil {
		m.isrListener.Store(nil)
		return
	}
	m.isrListener.Store(&isrListenerBox{l: l})
}

// isrChanged reports a successful ISR change to the listener.
func (m *Manager) isrChanged(tp kafka.TopicPartition, shrink bool) {
	b := m.isrListener.Load()
	if b == nil {
		return
	}
	if shrink {
		b.l.IsrShrunk(tp)
	} else {
		b.l.IsrExpanded(tp)
	}
}

// TopicListener is told when a StopReplica with delete removes the last
// partition of a topic this broker hosted (the broker then unregisters the
// topic's BrokerTopicMetrics, as Kafka's ReplicaManager.maybeRemoveTopicMetrics
// does). It is called with no Manager or partition lock held, after the
// logs were deleted, from the goroutine handling the StopReplica.
type TopicListener interface {
	TopicRemoved(topic string)
}

// topicListenerBox lets an interface value live in an atomic.Pointer.
type topicListenerBox struct{ l TopicListener }

// SetTopicListener installs l (nil removes it). Safe to call at any time.
func (m *Manager) SetTopicListener(l TopicListener) {
	if l == nil {
		m.topicListener.Store(nil)
		return
	}
	m.topicListener.Store(&topicListenerBox{l: l})
}

// topicsRemoved tells the topic listener of every topic in deleted of which
// no partition is hosted any more.
func (m *Manager) topicsRemoved(deleted map[string]bool) {
	b := m.topicListener.Load()
	if b == nil || len(deleted) == 0 {
		return
	}
	m.mu.RLock()
	for tp := range m.mu.partitions {
		delete(deleted, tp.Topic)
	}
	m.mu.RUnlock()
	for topic := range deleted {
		b.l.TopicRemoved(topic)
	}
}

// UnderMinIsrCount returns how many partitions this broker leads whose ISR
// is smaller than the topic's min.insync.replicas (Kafka's ReplicaManager
// UnderMinIsrPartitionCount).
func (m *Manager) UnderMinIsrCount() int {
	n := 0
	for _, p := range m.Partitions() {
		p.mu.RLock()
		if p.isLeaderLocked() && len(p.mu.isr) < p.mu.minISR {
			n++
		}
		p.mu.RUnlock()
	}
	return n
}
