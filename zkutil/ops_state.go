package zkutil

import (
	"errors"
	"fmt"

	"samsa/kafka"
)

// VersionedState is a partition state with the zkVersion of its /state znode.
// In UpdatePartitionStates, ZkVersion is the version the write expects.
type VersionedState struct {
	State     PartitionState
	ZkVersion int32
	// Mtime is when the znode was last written, in ms since the epoch by
	// the ZooKeeper server's clock (filled by GetPartitionStates only): the
	// scale measurements time each partition's election by it.
	Mtime int64
}

// GetPartitionState reads /brokers/topics/<t>/partitions/<p>/state and its
// zkVersion. Errors: ErrNoNode, ErrMalformed, connection errors.
func (c *Client) GetPartitionState(topic string, partition int32) (PartitionState, int32, error) {
	vs, err := c.getVersionedState(topic, partition)
	return vs.State, vs.ZkVersion, err
}

// getVersionedState is GetPartitionState with the znode's Mtime.
func (c *Client) getVersionedState(topic string, partition int32) (VersionedState, error) {
	path := PartitionStatePath(topic, partition)
	data, st, err := c.Get(path)
	if err != nil {
		return VersionedState{}, err
	}
	s, err := DecodePartitionState(data)
	if err != nil {
		return VersionedState{}, fmt.Errorf("%s: %w", path, err)
	}
	return VersionedState{State: s, ZkVersion: st.Version, Mtime: st.Mtime}, nil
}

// GetPartitionStates reads many /state znodes with pipelined reads.
// Partitions without a /state znode are left out of the map; any other
// failure (connection, malformed data) is returned.
func (c *Client) GetPartitionStates(tps []kafka.TopicPartition) (map[kafka.TopicPartition]VersionedState, error) {
	states := make([]VersionedState, len(tps))
	errs := make([]error, len(tps))
	parallel(len(tps), func(i int) {
		states[i], errs[i] = c.getVersionedState(tps[i].Topic, tps[i].Partition)
	})
	out := make(map[kafka.TopicPartition]VersionedState, len(tps))
	for i, tp := range tps {
		if errors.Is(errs[i], ErrNoNode) {
			continue
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[tp] = states[i]
	}
	return out, nil
}

// CreatePartitionStates creates the /state znodes of new partitions (and the
// /partitions and /partitions/<p> parents when missing), each create fenced by
// epochZkVersion (Kafka createTopicPartitionStatesRaw; Samsa batches up to 50
// partitions per multi). The result holds an
// entry only for partitions that failed: ErrNodeExists when the state was
// already there, ErrControllerMoved when the fence failed.
func (c *Client) CreatePartitionStates(epochZkVersion int32, states map[kafka.TopicPartition]PartitionState) map[kafka.TopicPartition]error {
	tps := sortedTPs(states)
	out := make(map[kafka.TopicPartition]error)
	// One /partitions parent per topic first.
	var topics []string
	for i, tp := range tps {
		if i == 0 || tps[i-1].Topic != tp.Topic {
			topics = append(topics, tp.Topic)
		}
	}
	topicErrs := make([]error, len(topics))
	parallel(len(topics), func(i int) {
		_, err := c.fencedMulti(epochZkVersion, CreateOp{Path: TopicPartitionsPath(topics[i]), Mode: Persistent})
		if errors.Is(err, ErrNodeExists) && !errors.Is(err, ErrControllerMoved) {
			err = nil
		}
		topicErrs[i] = err
	})
	failed := make(map[string]error)
	for i, t := range topics {
		if topicErrs[i] != nil {
			failed[t] = topicErrs[i]
		}
	}
	errs := make([]error, len(tps))
	var todo []int
	for i, tp := range tps {
		if err := failed[tp.Topic]; err != nil {
			errs[i] = err
			continue
		}
		todo = append(todo, i)
	}
	// Up to stateBatchOps/2 partitions (two creates each) per fenced multi
	// (ops_state_batch.go).
	per := stateBatchOps / 2
	parallel((len(todo)+per-1)/per, func(ci int) {
		c.createStateBatch(epochZkVersion, tps, states, append([]int(nil), todo[ci*per:min((ci+1)*per, len(todo))]...), errs)
	})
	for i, tp := range tps {
		if errs[i] != nil {
			out[tp] = errs[i]
		}
	}
	return out
}

// createPartitionState creates /partitions/<p> and its /state in one fenced
// multi; when /partitions/<p> already exists it creates /state alone.
func (c *Client) createPartitionState(epochZkVersion int32, tp kafka.TopicPartition, s PartitionState) error {
	state := CreateOp{Path: PartitionStatePath(tp.Topic, tp.Partition), Data: s.Encode(), Mode: Persistent}
	_, err := c.fencedMulti(epochZkVersion, CreateOp{Path: PartitionPath(tp.Topic, tp.Partition), Mode: Persistent}, state)
	var me *MultiError
	if errors.As(err, &me) && me.Index == 0 && errors.Is(err, ErrNodeExists) {
		_, err = c.fencedMulti(epochZkVersion, state)
	}
	return err
}

// UpdatePartitionStateFromLeader is the partition leader's own ISR write
// (pre-AlterIsr Kafka, ReplicationUtils.updateLeaderAndIsr): a setData
// conditional on expectedZkVersion, with no controller fence. On
// ErrBadVersion it reads the znode back; if it already holds state (a retried
// write of ours) that counts as success. Returns the new zkVersion.
func (c *Client) UpdatePartitionStateFromLeader(tp kafka.TopicPartition, state PartitionState, expectedZkVersion int32) (int32, error) {
	path := PartitionStatePath(tp.Topic, tp.Partition)
	st, err := c.Set(path, state.Encode(), expectedZkVersion)
	if err == nil {
		return st.Version, nil
	}
	if !errors.Is(err, ErrBadVersion) {
		return 0, err
	}
	cur, v, rerr := c.GetPartitionState(tp.Topic, tp.Partition)
	if rerr == nil && cur.Equal(state) {
		return v, nil
	}
	return 0, err
}
