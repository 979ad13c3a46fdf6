package storage

import (
	"errors"
	"sync"
)

// closeFlushWorkers bounds the logs Manager.Close flushes at once. A
// log's flush at shutdown usually syncs little data but may write its
// leader-epoch-checkpoint (two fsyncs; every partition whose leadership
// changed since its last flush has one to write), so with thousands of
// partitions the flushes are overlapped, as Kafka's LogManager.shutdown
// runs them on its recovery threads and the leadership wave
// (broker/replica) overlaps its writes: concurrent fsyncs share the file
// system's journal commits.
const closeFlushWorkers = 32

// flushForClose flushes every log of a live dir (offline ones are skipped)
// on up to closeFlushWorkers goroutines and returns the errors by log dir.
func flushForClose(logs []*managedLog, offline map[string]error) map[string]error {
	dirErr := map[string]error{}
	var mu sync.Mutex
	next := make(chan *managedLog)
	var wg sync.WaitGroup
	for range min(closeFlushWorkers, len(logs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ml := range next {
				if err := ml.log.Flush(); err != nil {
					mu.Lock()
					dirErr[ml.root] = errors.Join(dirErr[ml.root], err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, ml := range logs {
		if offline[ml.root] == nil {
			next <- ml
		}
	}
	close(next)
	wg.Wait()
	return dirErr
}
