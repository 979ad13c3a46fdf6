package replica

import (
	"sync"
	"time"
)

// A LeaderAndIsr after a broker failure or a controlled shutdown names
// thousands of partitions, and each one this broker now leads records its
// new epoch in its leader epoch cache. Until issue 18 that rewrote the
// leader-epoch-checkpoint durably (temp file, fsync, rename, directory
// fsync, as Kafka 2.8's LeaderEpochFileCache.assign): 2.4 ms per partition
// in a row, 2.4 s for 1,000 (BenchmarkReplicaLeadershipWave). The cache now
// records a new epoch in memory and the log writes the file before its
// recovery point passes the epoch (storage.LeaderEpochCache, as Kafka 3.7,
// KAFKA-15046), so a wave no longer waits on fsyncs for it. applyWave still
// applies the partitions of one request on waveWorkers goroutines, so the
// I/O a partition may still do (a follower's truncation, which writes its
// checkpoint durably) overlaps. Partitions are independent here: each
// takes only its own lock, and the topic config lookup is memoised under a
// mutex.

// waveWorkers bounds the goroutines (and so the threads blocked in fsync)
// of one wave.
const waveWorkers = 128

// waveItem is one partition of a LeaderAndIsr wave and its outcome.
type waveItem struct {
	ps       PartitionState
	p        *Partition
	isLeader bool
	err      error
}

// applyWave runs applyLeaderAndIsr for every item, at most waveWorkers at
// a time, and fills in each item's outcome. It returns when all are done.
// Logs that are not open yet are opened (or created) first, one after
// another in request order: a new log goes to the log dir holding the
// fewest, so placement stays what a sequential apply gives.
func applyWave(items []waveItem, now time.Time, topicConfig func(string) (TopicConfig, error)) {
	pending := items[:0:0]
	for i := range items {
		if _, err := items[i].p.applyLeaderAndIsrUpTo(items[i].ps, now, topicConfig, true); err != nil {
			items[i].err = err
			continue
		}
		pending = append(pending, items[i])
	}
	// pending has its own backing array: copy the outcomes back.
	all := items
	defer func() {
		j := 0
		for i := range all {
			if all[i].err == nil {
				all[i] = pending[j]
				j++
			}
		}
	}()
	items = pending
	if len(items) <= 1 {
		for i := range items {
			items[i].isLeader, items[i].err = items[i].p.applyLeaderAndIsr(items[i].ps, now, topicConfig)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(waveWorkers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				items[i].isLeader, items[i].err = items[i].p.applyLeaderAndIsr(items[i].ps, now, topicConfig)
			}
		}()
	}
	for i := range items {
		next <- i
	}
	close(next)
	wg.Wait()
}
