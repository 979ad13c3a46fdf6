package zkutil

import (
	"errors"
	"fmt"
)

// VersionedState is a partition state with the zkVersion of its /state znode.
// In UpdatePartitionStates, ZkVersion is the version the write expects.
type VersionedState struct {
	State     PartitionState
	ZkVersion int32
}

// GetPartitionState reads /brokers/topics/<t>/partitions/<p>/state and its
// zkVersion. Errors: ErrNoNode, ErrMalformed, connection errors.
func (c *Client) GetPartitionState(topic string, partition int32) (PartitionState, int32, error) {
	path := PartitionStatePath(topic, partition)
	data, st, err := c.Get(path)
	if err != nil {
		return PartitionState{}, 0, err
	}
	s, err := DecodePartitionState(data)
	if err != nil {
		return PartitionState{}, 0, fmt.Errorf("%s: %w", path, err)
	}
	return s, st.Version, nil
}

// GetPartitionStates reads many /state znodes with pipelined reads.
// Partitions without a /state znode are left out of the map; any other
// failure (connection, malformed data) is returned.
func (c *Client) GetPartitionStates(tps []TopicPartition) (map[TopicPartition]VersionedState, error) {
	states := make([]VersionedState, len(tps))
	errs := make([]error, len(tps))
	parallel(len(tps), func(i int) {
		states[i].State, states[i].ZkVersion, errs[i] = c.GetPartitionState(tps[i].Topic, tps[i].Partition)
	})
	out := make(map[TopicPartition]VersionedState, len(tps))
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
// epochZkVersion (Kafka createTopicPartitionStatesRaw). The result holds an
// entry only for partitions that failed: ErrNodeExists when the state was
// already there, ErrControllerMoved when the fence failed.
func (c *Client) CreatePartitionStates(epochZkVersion int32, states map[TopicPartition]PartitionState) map[TopicPartition]error {
	tps := sortedTPs(states)
	errs := make([]error, len(tps))
	parallel(len(tps), func(i int) {
		errs[i] = c.createPartitionState(epochZkVersion, tps[i], states[tps[i]])
	})
	out := make(map[TopicPartition]error)
	for i, tp := range tps {
		if errs[i] != nil {
			out[tp] = errs[i]
		}
	}
	return out
}

func (c *Client) createPartitionState(epochZkVersion int32, tp TopicPartition, s PartitionState) error {
	create := CreateOp{Path: PartitionStatePath(tp.Topic, tp.Partition), Data: s.Encode(), Mode: Persistent}
	_, err := c.fencedMulti(epochZkVersion, create)
	if !errors.Is(err, ErrNoNode) || errors.Is(err, ErrControllerMoved) {
		return err
	}
	// Missing parents: create them (fenced; an existing one is fine), then retry.
	for _, p := range []string{TopicPartitionsPath(tp.Topic), PartitionPath(tp.Topic, tp.Partition)} {
		_, err := c.fencedMulti(epochZkVersion, CreateOp{Path: p, Mode: Persistent})
		if err != nil && !errors.Is(err, ErrNodeExists) {
			return err
		}
	}
	_, err = c.fencedMulti(epochZkVersion, create)
	return err
}

// UpdatePartitionStates writes new states, each conditional on the
// partition's ZkVersion and on the controller epoch zkVersion (one fenced
// multi per partition, pipelined). It returns the new zkVersions of the
// partitions written and the errors of the others: ErrBadVersion (the caller
// re-reads and retries, Kafka style), ErrNoNode, or ErrControllerMoved (the
// caller resigns).
func (c *Client) UpdatePartitionStates(epochZkVersion int32, updates map[TopicPartition]VersionedState) (map[TopicPartition]int32, map[TopicPartition]error) {
	tps := sortedTPs(updates)
	versions := make([]int32, len(tps))
	errs := make([]error, len(tps))
	parallel(len(tps), func(i int) {
		u := updates[tps[i]]
		res, err := c.fencedMulti(epochZkVersion, SetOp{
			Path: PartitionStatePath(tps[i].Topic, tps[i].Partition), Data: u.State.Encode(), Version: u.ZkVersion,
		})
		if err != nil {
			errs[i] = err
			return
		}
		versions[i] = res[0].Stat.Version
	})
	okOut := make(map[TopicPartition]int32, len(tps))
	errOut := make(map[TopicPartition]error)
	for i, tp := range tps {
		if errs[i] != nil {
			errOut[tp] = errs[i]
		} else {
			okOut[tp] = versions[i]
		}
	}
	return okOut, errOut
}

// UpdatePartitionStateFromLeader is the partition leader's own ISR write
// (pre-AlterIsr Kafka, ReplicationUtils.updateLeaderAndIsr): a setData
// conditional on expectedZkVersion, with no controller fence. On
// ErrBadVersion it reads the znode back; if it already holds state (a retried
// write of ours) that counts as success. Returns the new zkVersion.
func (c *Client) UpdatePartitionStateFromLeader(tp TopicPartition, state PartitionState, expectedZkVersion int32) (int32, error) {
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
