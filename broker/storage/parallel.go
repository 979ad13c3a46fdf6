package storage

// Running many small file-system operations concurrently, with a bound.

import "sync"

// forEachParallel calls fn(i) for every i in [0, n) on at most workers
// goroutines and returns when all calls have returned. With one item or
// one worker it runs inline. fn must be safe to call concurrently for
// different i. It is how the Manager overlaps the waits of many small
// file-system operations (a checkpoint's fsyncs, a new log's mkdir):
// concurrent fsyncs on one file system share its journal commits, and
// creations blocked behind writeback wait together rather than in a row.
func forEachParallel(n, workers int, fn func(i int)) {
	if n <= 1 || workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
