package storage

// Flushing many logs at once: the logs of one log dir share the fsyncs of
// their leader-epoch-checkpoints (Manager.Close and the flusher).

import (
	"errors"
	"path/filepath"
	"sync"
)

// closeFlushWorkers bounds the logs of one log dir flushLogs flushes at
// once. A log's flush at shutdown usually syncs little data but may write
// its leader-epoch-checkpoint (every partition whose leadership changed
// since its last flush has one to write), so with thousands of partitions
// the flushes are overlapped, as Kafka's LogManager.shutdown runs them on
// its recovery threads: concurrent fsyncs share the file system's journal
// commits.
const closeFlushWorkers = 32

// flushLogs flushes logs as Log.Flush does and returns each one's error
// (nil for a log closed meanwhile), in the order given. The logs of one
// log dir are flushed together, checkpointBatchMax at a time: their
// segments on closeFlushWorkers goroutines, their leader-epoch-checkpoints
// staged in one checkpointBatch and made durable together
// (checkpoint_batch.go), then each log's recovery point advances. Log dirs are flushed concurrently.
// One flushLogs runs at a time (flushBatchMu): a batch holds the flushMu
// of every log it flushes until its commit, and two batches taking them
// in different orders could deadlock.
func (m *Manager) flushLogs(logs []*Log) []error {
	m.flushBatchMu.Lock()
	defer m.flushBatchMu.Unlock()
	byRoot := map[string][]int{}
	for i, l := range logs {
		root := filepath.Dir(l.Dir())
		byRoot[root] = append(byRoot[root], i)
	}
	errs := make([]error, len(logs))
	var wg sync.WaitGroup
	for _, idx := range byRoot {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flushDir(logs, idx, errs)
		}()
	}
	wg.Wait()
	return errs
}

// checkpointBatchMax bounds the logs of one checkpointBatch: a staged
// checkpoint keeps its temp file open until its fsync, and a broker with
// 10,000 partitions must not need 10,000 more descriptors to shut down.
const checkpointBatchMax = 512

// flushDir flushes logs[i] for every i in idx (all in one log dir), up to
// checkpointBatchMax of them per checkpointBatch, and sets errs[i].
func flushDir(logs []*Log, idx []int, errs []error) {
	for len(idx) > 0 {
		chunk := idx[:min(len(idx), checkpointBatchMax)]
		idx = idx[len(chunk):]
		var batch checkpointBatch
		flushes := make([]*logFlush, len(chunk))
		forEachParallel(len(chunk), closeFlushWorkers, func(j int) {
			flushes[j] = logs[chunk[j]].startFlush(&batch)
		})
		batch.commit()
		for j, f := range flushes {
			if f != nil {
				errs[chunk[j]] = f.end()
			}
		}
	}
}

// flushForClose flushes every log of a live dir (offline ones are
// skipped) with flushLogs and returns the errors by log dir.
func (m *Manager) flushForClose(logs []*managedLog, offline map[string]error) map[string]error {
	var live []*managedLog
	var toFlush []*Log
	for _, ml := range logs {
		if offline[ml.root] == nil {
			live = append(live, ml)
			toFlush = append(toFlush, ml.log)
		}
	}
	errs := m.flushLogs(toFlush)
	dirErr := map[string]error{}
	for i, err := range errs {
		if err != nil {
			dirErr[live[i].root] = errors.Join(dirErr[live[i].root], err)
		}
	}
	return dirErr
}
