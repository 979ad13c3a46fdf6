package zkutil

import (
	"errors"
	"fmt"

	"samsa/kafka"
)

// GetPartitionReassignment reads /admin/reassign_partitions: target
// replicas per partition. A missing znode yields an empty map.
func (c *Client) GetPartitionReassignment() (map[kafka.TopicPartition][]int32, error) {
	data, _, err := c.Get(ReassignPartitionsPath())
	if errors.Is(err, ErrNoNode) {
		return map[kafka.TopicPartition][]int32{}, nil
	}
	if err != nil {
		return nil, err
	}
	return DecodeReassignment(data)
}

// ReassignmentInProgress reports whether /admin/reassign_partitions exists.
func (c *Client) ReassignmentInProgress() (bool, error) {
	ok, _, err := c.Exists(ReassignPartitionsPath())
	return ok, err
}

// CreatePartitionReassignment creates /admin/reassign_partitions (the
// kafka-reassign-partitions tool's ZooKeeper path). Errors: ErrNodeExists
// while a reassignment is in progress.
func (c *Client) CreatePartitionReassignment(r map[kafka.TopicPartition][]int32) error {
	_, err := c.CreateRecursive(ReassignPartitionsPath(), EncodeReassignment(r), Persistent)
	if errors.Is(err, ErrNodeExists) {
		return fmt.Errorf("%w: a partition reassignment is already in progress", err)
	}
	return err
}

// SetPartitionReassignment is the controller's rewrite of
// /admin/reassign_partitions as partitions complete, fenced by
// epochZkVersion; an empty r deletes the znode.
func (c *Client) SetPartitionReassignment(r map[kafka.TopicPartition][]int32, epochZkVersion int32) error {
	if len(r) == 0 {
		return c.DeletePartitionReassignment(epochZkVersion)
	}
	_, err := c.fencedMulti(epochZkVersion, SetOp{Path: ReassignPartitionsPath(), Data: EncodeReassignment(r), Version: AnyVersion})
	if errors.Is(err, ErrNoNode) && !errors.Is(err, ErrControllerMoved) {
		_, err = c.fencedMulti(epochZkVersion, CreateOp{Path: ReassignPartitionsPath(), Data: EncodeReassignment(r), Mode: Persistent})
	}
	return err
}

// DeletePartitionReassignment deletes /admin/reassign_partitions, fenced. A
// missing znode is fine.
func (c *Client) DeletePartitionReassignment(epochZkVersion int32) error {
	return c.deleteFenced(ReassignPartitionsPath(), epochZkVersion)
}

// GetPreferredReplicaElection reads /admin/preferred_replica_election.
// Errors: ErrNoNode when there is no pending election.
func (c *Client) GetPreferredReplicaElection() ([]kafka.TopicPartition, error) {
	data, _, err := c.Get(PreferredReplicaElectionPath())
	if err != nil {
		return nil, err
	}
	return DecodePreferredReplicaElection(data)
}

// CreatePreferredReplicaElection creates /admin/preferred_replica_election.
// Errors: ErrNodeExists while an election is pending.
func (c *Client) CreatePreferredReplicaElection(tps []kafka.TopicPartition) error {
	_, err := c.CreateRecursive(PreferredReplicaElectionPath(), EncodePreferredReplicaElection(tps), Persistent)
	if errors.Is(err, ErrNodeExists) {
		return fmt.Errorf("%w: a preferred replica election is already in progress", err)
	}
	return err
}

// DeletePreferredReplicaElection deletes /admin/preferred_replica_election,
// fenced. A missing znode is fine.
func (c *Client) DeletePreferredReplicaElection(epochZkVersion int32) error {
	return c.deleteFenced(PreferredReplicaElectionPath(), epochZkVersion)
}
