package replica

import (
	"context"
	"sync"
	"unicode/utf16"

	"samsa/kafka"
)

// FetcherConfig configures the follower fetchers.
type FetcherConfig struct {
	// Source fetches from a leader broker; nil disables follower fetching
	// (followers then never catch up, and with RF > 1 the leader's HW
	// stays where the followers last were).
	Source FetchSource
	// MaxWaitMs, MinBytes, MaxBytes and PartitionMaxBytes are
	// replica.fetch.wait.max.ms, replica.fetch.min.bytes,
	// replica.fetch.response.max.bytes and replica.fetch.max.bytes.
	MaxWaitMs         int32
	MinBytes          int32
	MaxBytes          int32
	PartitionMaxBytes int32
	// BackoffMs is replica.fetch.backoff.ms, the pause after an error.
	BackoffMs int32
	// NumFetchers is num.replica.fetchers: fetcher goroutines per leader
	// broker (at least 1). Partitions are spread over them by Kafka's
	// AbstractFetcherManager.getFetcherId.
	NumFetchers int
}

// fetcherKey names one fetcher goroutine: a leader and the fetcher index.
type fetcherKey struct {
	leader int32
	id     int
}

// fetcherID is Kafka's getFetcherId: abs(31 * topic.hashCode +
// partition) % num.replica.fetchers, with Java's String.hashCode (UTF-16
// code units), so a partition goes to the same fetcher index as on Kafka.
func fetcherID(tp kafka.TopicPartition, n int) int {
	if n <= 1 {
		return 0
	}
	var h int32
	for _, u := range utf16.Encode([]rune(tp.Topic)) {
		h = 31*h + int32(u)
	}
	v := 31*h + tp.Partition
	// Kafka's Utils.abs maps MinValue to 0 (v & 0x7fffffff).
	return int(v&0x7fffffff) % n
}

// fetchTarget is a partition to follow.
type fetchTarget struct {
	tp          kafka.TopicPartition
	leader      int32
	leaderEpoch int32
}

// fetcherManager owns num.replica.fetchers fetcher goroutines per source
// broker (Kafka's ReplicaFetcherManager), each with its own fetch session.
type fetcherManager struct {
	m   *Manager
	cfg FetcherConfig

	mu struct {
		sync.Mutex
		fetchers map[fetcherKey]*fetcher
		closed   bool
	}
	wg sync.WaitGroup
}

func newFetcherManager(m *Manager, cfg FetcherConfig) *fetcherManager {
	fm := &fetcherManager{m: m, cfg: cfg}
	fm.mu.fetchers = make(map[fetcherKey]*fetcher)
	return fm
}

// add starts following targets, moving a partition from the fetcher of
// its old leader to the fetcher of its new one.
func (fm *fetcherManager) add(_ context.Context, targets []fetchTarget, leaders []LeaderEndpoint) {
	if fm.cfg.Source == nil || len(targets) == 0 {
		return
	}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if fm.mu.closed {
		return
	}
	eps := make(map[int32]LeaderEndpoint, len(leaders))
	for _, l := range leaders {
		eps[l.ID] = l
	}
	for _, t := range targets {
		key := fetcherKey{leader: t.leader, id: fetcherID(t.tp, fm.cfg.NumFetchers)}
		for k, f := range fm.mu.fetchers {
			if k != key {
				f.removePartition(t.tp)
			}
		}
		f, ok := fm.mu.fetchers[key]
		if !ok {
			f = newFetcher(fm, t.leader, key.id)
			fm.mu.fetchers[key] = f
			fm.wg.Add(1)
			go func() {
				defer fm.wg.Done()
				f.run()
			}()
		}
		if ep, ok := eps[t.leader]; ok {
			f.setEndpoint(ep)
		}
		f.addPartition(t)
	}
}

// remove stops following tps.
func (fm *fetcherManager) remove(tps []kafka.TopicPartition) {
	if len(tps) == 0 {
		return
	}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	for _, f := range fm.mu.fetchers {
		for _, tp := range tps {
			f.removePartition(tp)
		}
	}
}

// close stops every fetcher and waits for their goroutines.
func (fm *fetcherManager) close() {
	fm.mu.Lock()
	fm.mu.closed = true
	for _, f := range fm.mu.fetchers {
		f.stop()
	}
	fm.mu.Unlock()
	fm.wg.Wait()
}

// LogStartMoved tells the follower fetchers that tp's log start offset
// moved outside their own appends (retention, DeleteRecords): the next
// fetch of tp's fetcher carries the new offset (the leader's low watermark
// waits for it). Called from the log's OnLogStartMoved, under the log's
// lock: it takes the fetcher manager's and a fetcher's mutex, never a log's.
func (m *Manager) LogStartMoved(tp kafka.TopicPartition) {
	fm := m.fetchers
	fm.mu.Lock()
	defer fm.mu.Unlock()
	for _, f := range fm.mu.fetchers {
		f.touch(tp)
	}
}
