package zkutil

import (
	"errors"
	"fmt"
	"sync"
)

// GetOrCreateClusterID returns the cluster id in /cluster/id, creating the
// znode with newID when it is missing (the first broker of a cluster does
// this; Kafka KafkaZkClient.getOrCreateClusterId).
func (c *Client) GetOrCreateClusterID(newID string) (string, error) {
	for attempt := 0; attempt < 3; attempt++ {
		data, _, err := c.Get(ClusterIDPath())
		if err == nil {
			return DecodeClusterID(data)
		}
		if !errors.Is(err, ErrNoNode) {
			return "", err
		}
		_, err = c.CreateRecursive(ClusterIDPath(), EncodeClusterID(newID), Persistent)
		if err == nil {
			return newID, nil
		}
		if !errors.Is(err, ErrNodeExists) {
			return "", err
		}
	}
	return "", fmt.Errorf("zkutil: %s keeps appearing and vanishing", ClusterIDPath())
}

// GenerateBrokerID bumps /brokers/seqid and returns its new zkVersion (1, 2,
// 3, ...). The caller adds reserved.broker.max.id (Kafka
// KafkaZkClient.generateBrokerSequenceId).
func (c *Client) GenerateBrokerID() (int32, error) {
	st, err := c.Set(BrokerSeqIDPath(), nil, AnyVersion)
	if errors.Is(err, ErrNoNode) {
		if _, err := c.CreateRecursive(BrokerSeqIDPath(), nil, Persistent); err != nil && !errors.Is(err, ErrNodeExists) {
			return 0, err
		}
		st, err = c.Set(BrokerSeqIDPath(), nil, AnyVersion)
	}
	if err != nil {
		return 0, err
	}
	return st.Version, nil
}

// CreatePersistentPaths creates the znodes Kafka 2.8 brokers create at start
// (PersistentPaths); existing ones are kept.
func (c *Client) CreatePersistentPaths() error {
	for _, p := range PersistentPaths() {
		if err := c.EnsurePath(p); err != nil {
			return err
		}
	}
	return nil
}

// parallelism bounds the concurrent requests of the batch operations.
// go-zookeeper pipelines concurrent requests on its one connection, which is
// what Kafka's async batch reads do.
const parallelism = 16

// parallel calls fn(i) for i in [0,n) on at most parallelism goroutines and
// waits for all of them.
func parallel(n int, fn func(i int)) {
	if n <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	workers := min(n, parallelism)
	next := make(chan int)
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
