package replica

import (
	"sync"
	"time"

	"samsa/kafka"
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
//
// A LeaderAndIsr that creates a topic creates its logs here too, and on a
// busy disk each new log's mkdir and file creation waits behind the
// writeback of earlier runs (issue 18 point 2: 10,000 partitions took
// 20-28 s to create right after a produce run, 9 s on an idle disk). So
// new logs are created in parallel as well: the wave first hands the
// partitions whose log is not open, in request order, to the LogProvider's
// PlanNewLogs (LogPlanner), which decides where each new log goes exactly
// as creating them one after another would (the log dir holding the
// fewest, storage/manager_create.go), and then every partition, creating
// its log if needed, is applied on the pool. A LogProvider that cannot
// plan gets the old order: logs opened or created one after another, in
// request order, then the rest in parallel.

// waveWorkers bounds the goroutines (and so the threads blocked in fsync
// or in a file creation) of one wave.
const waveWorkers = 128

// LogPlanner is implemented by a LogProvider that can place new logs
// before creating them (the broker's, over storage.Manager.PlanNewLogs).
type LogPlanner interface {
	// PlanNewLogs gets the partitions of a wave whose logs are not open,
	// in request order, and decides the log dir of each log that
	// GetOrCreateLog(tp, cfg, IsNew) will create as creating them in that
	// order would, so that they can then be created concurrently. It does
	// no I/O and cannot fail: a partition it cannot plan is placed by its
	// GetOrCreateLog.
	PlanNewLogs(logs []NewLog)
}

// NewLog is a partition whose log a wave may create, with its
// LeaderAndIsr IsNew flag.
type NewLog struct {
	TP    kafka.TopicPartition
	IsNew bool
}

// waveItem is one partition of a LeaderAndIsr wave and its outcome.
type waveItem struct {
	ps       PartitionState
	p        *Partition
	isLeader bool
	err      error
}

// applyWave runs applyLeaderAndIsr for every item, at most waveWorkers at
// a time, and fills in each item's outcome. It returns when all are done.
// New logs are planned first when the LogProvider is a LogPlanner, and
// otherwise opened (or created) first, one after another in request
// order, so that placement stays what a sequential apply gives.
func applyWave(items []waveItem, now time.Time, topicConfig func(string) (TopicConfig, error)) {
	if len(items) == 0 {
		return
	}
	if planner, ok := items[0].p.m.cfg.Logs.(LogPlanner); ok {
		planNewLogs(planner, items, topicConfig)
		applyEach(items, now, topicConfig)
		return
	}
	pending := items[:0:0]
	for i := range items {
		if _, err := items[i].p.applyLeaderAndIsrUpTo(items[i].ps, now, topicConfig, true); err != nil {
			items[i].err = err
			continue
		}
		pending = append(pending, items[i])
	}
	applyEach(pending, now, topicConfig)
	// pending has its own backing array: copy the outcomes back.
	j := 0
	for i := range items {
		if items[i].err == nil {
			items[i] = pending[j]
			j++
		}
	}
}

// applyEach runs applyLeaderAndIsr for every item on up to waveWorkers
// goroutines.
func applyEach(items []waveItem, now time.Time, topicConfig func(string) (TopicConfig, error)) {
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

// planNewLogs hands planner, in request order, the items whose log is not
// open and whose apply will get as far as opening it (its epoch is not
// stale and its topic config is known), so that the plan counts only the
// logs the wave creates, as a sequential apply would.
func planNewLogs(planner LogPlanner, items []waveItem, topicConfig func(string) (TopicConfig, error)) {
	var logs []NewLog
	for i := range items {
		p, ps := items[i].p, items[i].ps
		p.mu.RLock()
		opens := p.mu.data == nil && (p.mu.leaderEpoch < 0 || ps.LeaderEpoch > p.mu.leaderEpoch)
		p.mu.RUnlock()
		if !opens {
			continue
		}
		if _, err := topicConfig(p.tp.Topic); err != nil {
			continue
		}
		logs = append(logs, NewLog{TP: p.tp, IsNew: ps.IsNew})
	}
	if len(logs) > 0 {
		planner.PlanNewLogs(logs)
	}
}
