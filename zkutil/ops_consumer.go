package zkutil

import (
	"bytes"
	"errors"
	"fmt"
)

// Old ZooKeeper-based consumer znodes (/consumers/<g>/...), used by
// tools/zkconsumer and by OffsetCommit/OffsetFetch v0.

// createEphemeralOwned creates an ephemeral znode (parents as needed). If it
// exists and this session owns it, its data is refreshed; if another session
// owns it, the error wraps ErrNodeExists.
func (c *Client) createEphemeralOwned(path string, data []byte) error {
	for attempt := 0; attempt < 3; attempt++ {
		_, err := c.CreateRecursive(path, data, Ephemeral)
		if !errors.Is(err, ErrNodeExists) {
			return err
		}
		cur, st, err := c.Get(path)
		if errors.Is(err, ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		if st.EphemeralOwner != c.SessionID() {
			return fmt.Errorf("%w: %s is held by session 0x%x", ErrNodeExists, path, st.EphemeralOwner)
		}
		if !bytes.Equal(cur, data) {
			_, err = c.Set(path, data, st.Version)
		}
		return err
	}
	return fmt.Errorf("zkutil: %s keeps changing owner", path)
}

// deleteIfOwned deletes an ephemeral znode this session owns; a missing or
// foreign znode is left alone.
func (c *Client) deleteIfOwned(path string) error {
	_, st, err := c.Get(path)
	if errors.Is(err, ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.EphemeralOwner != c.SessionID() {
		return nil
	}
	if err := c.Delete(path, st.Version); err != nil && !errors.Is(err, ErrNoNode) {
		return err
	}
	return nil
}

// GetConsumerGroups returns the children of /consumers, sorted.
func (c *Client) GetConsumerGroups() ([]string, error) {
	return c.sortedChildren(ConsumersPath(), "")
}

// RegisterConsumer creates the ephemeral /consumers/<g>/ids/<id>. Errors
// wrap ErrNodeExists when another session holds that consumer id.
func (c *Client) RegisterConsumer(group, consumerID string, reg ConsumerRegistration) error {
	return c.createEphemeralOwned(ConsumerIDPath(group, consumerID), reg.Encode())
}

// DeregisterConsumer deletes this session's /consumers/<g>/ids/<id>.
func (c *Client) DeregisterConsumer(group, consumerID string) error {
	return c.deleteIfOwned(ConsumerIDPath(group, consumerID))
}

// GetConsumerIDs returns the registered consumer ids of a group, sorted.
func (c *Client) GetConsumerIDs(group string) ([]string, error) {
	return c.sortedChildren(ConsumerIDsPath(group), "")
}

// GetConsumerRegistration reads /consumers/<g>/ids/<id>.
func (c *Client) GetConsumerRegistration(group, consumerID string) (ConsumerRegistration, error) {
	data, _, err := c.Get(ConsumerIDPath(group, consumerID))
	if err != nil {
		return ConsumerRegistration{}, err
	}
	return DecodeConsumerRegistration(data)
}

// ClaimPartition creates the ephemeral /consumers/<g>/owners/<t>/<p> holding
// owner (the consumer thread id). Errors wrap ErrNodeExists while another
// session owns the partition; the caller backs off and retries, as the old
// consumer's rebalance does.
func (c *Client) ClaimPartition(group, topic string, partition int32, owner string) error {
	return c.createEphemeralOwned(ConsumerOwnerPath(group, topic, partition), []byte(owner))
}

// ReleasePartition deletes this session's owner znode for the partition.
func (c *Client) ReleasePartition(group, topic string, partition int32) error {
	return c.deleteIfOwned(ConsumerOwnerPath(group, topic, partition))
}

// GetPartitionOwner returns the owner string of a partition. Errors: ErrNoNode.
func (c *Client) GetPartitionOwner(group, topic string, partition int32) (string, error) {
	data, _, err := c.Get(ConsumerOwnerPath(group, topic, partition))
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// GetConsumerOffset reads /consumers/<g>/offsets/<t>/<p>. Errors: ErrNoNode
// when nothing was committed, ErrMalformed.
func (c *Client) GetConsumerOffset(group, topic string, partition int32) (int64, error) {
	data, _, err := c.Get(ConsumerOffsetPath(group, topic, partition))
	if err != nil {
		return 0, err
	}
	return DecodeConsumerOffset(data)
}

// SetConsumerOffset writes /consumers/<g>/offsets/<t>/<p> unconditionally,
// creating it recursively when missing (Kafka updatePersistentPath).
func (c *Client) SetConsumerOffset(group, topic string, partition int32, offset int64) error {
	return c.setOrCreate(ConsumerOffsetPath(group, topic, partition), EncodeConsumerOffset(offset))
}

// GetConsumerOffsets reads all committed offsets of a group for a topic,
// keyed by partition. A missing topic yields an empty map.
func (c *Client) GetConsumerOffsets(group, topic string) (map[int32]int64, error) {
	names, err := c.sortedChildren(ConsumerOffsetsPath(group, topic), "")
	if err != nil {
		return nil, err
	}
	out := make(map[int32]int64, len(names))
	for _, n := range names {
		var p int32
		if _, err := fmt.Sscanf(n, "%d", &p); err != nil || itoa(p) != n {
			continue
		}
		off, err := c.GetConsumerOffset(group, topic, p)
		if errors.Is(err, ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[p] = off
	}
	return out, nil
}
