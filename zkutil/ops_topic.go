package zkutil

import (
	"errors"
	"fmt"
	"strings"
)

// maxTopicNameLength is Kafka's Topic.MAX_NAME_LENGTH.
const maxTopicNameLength = 249

// ValidateTopicName applies Kafka's topic name rules: 1..249 characters from
// [a-zA-Z0-9._-], and not "." or "..". Errors wrap ErrInvalidTopic.
func ValidateTopicName(topic string) error {
	switch {
	case topic == "":
		return fmt.Errorf("%w: name is empty", ErrInvalidTopic)
	case topic == "." || topic == "..":
		return fmt.Errorf("%w: name cannot be %q", ErrInvalidTopic, topic)
	case len(topic) > maxTopicNameLength:
		return fmt.Errorf("%w: name is longer than %d characters", ErrInvalidTopic, maxTopicNameLength)
	}
	for _, r := range topic {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("%w: %q contains a character other than ASCII alphanumerics, '.', '_' and '-'", ErrInvalidTopic, topic)
		}
	}
	return nil
}

// collisionKey is Kafka's unifyCollisionChars: '.' and '_' collide.
func collisionKey(topic string) string { return strings.ReplaceAll(topic, ".", "_") }

// GetAllTopics returns the children of /brokers/topics, sorted.
func (c *Client) GetAllTopics() ([]string, error) {
	return c.sortedChildren(TopicsPath(), "")
}

// TopicExists reports whether /brokers/topics/<t> exists.
func (c *Client) TopicExists(topic string) (bool, error) {
	ok, _, err := c.Exists(TopicPath(topic))
	return ok, err
}

// GetTopicAssignment reads /brokers/topics/<t> and its zkVersion. Errors:
// ErrNoNode for an unknown topic, ErrMalformed.
func (c *Client) GetTopicAssignment(topic string) (TopicAssignment, int32, error) {
	data, st, err := c.Get(TopicPath(topic))
	if err != nil {
		return TopicAssignment{}, 0, err
	}
	a, err := DecodeTopicAssignment(data)
	if err != nil {
		return TopicAssignment{}, 0, fmt.Errorf("%s: %w", TopicPath(topic), err)
	}
	return a, st.Version, nil
}

// VersionedAssignment is a topic assignment with its znode zkVersion.
type VersionedAssignment struct {
	Assignment TopicAssignment
	ZkVersion  int32
}

// GetTopicAssignments reads the assignments of topics with pipelined reads.
// Topics that do not exist are left out of the map.
func (c *Client) GetTopicAssignments(topics []string) (map[string]VersionedAssignment, error) {
	as := make([]VersionedAssignment, len(topics))
	errs := make([]error, len(topics))
	parallel(len(topics), func(i int) {
		as[i].Assignment, as[i].ZkVersion, errs[i] = c.GetTopicAssignment(topics[i])
	})
	out := make(map[string]VersionedAssignment, len(topics))
	for i, t := range topics {
		if errors.Is(errs[i], ErrNoNode) {
			continue
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[t] = as[i]
	}
	return out, nil
}

// CreateTopic writes /config/topics/<t> and /brokers/topics/<t> (the
// znodes and JSON of Kafka's AdminZkClient.createTopicWithAssignment, in one
// multi rather than two writes, config first); the controller's
// topic watch does the rest, giving the topic an id. Errors: ErrInvalidTopic,
// ErrTopicExists (also when the topic is still marked for deletion),
// ErrTopicCollision (the name equals an existing topic's after '.'→'_').
func (c *Client) CreateTopic(topic string, assignment map[int32][]int32, config map[string]string) error {
	return c.CreateTopicWithID(topic, "", assignment, config)
}

// CreateTopicWithID is CreateTopic writing topicID (NewTopicID; "" for none)
// into /brokers/topics/<t> (JSON version 3), as Kafka 2.8's CreateTopics does
// with IBP >= 2.8-IV0 (createTopicWithAssignment with usesTopicId): the
// controller then has no id of its own to write.
func (c *Client) CreateTopicWithID(topic, topicID string, assignment map[int32][]int32, config map[string]string) error {
	if err := ValidateTopicName(topic); err != nil {
		return err
	}
	topics, err := c.GetAllTopics()
	if err != nil {
		return err
	}
	key := collisionKey(topic)
	for _, t := range topics {
		if t == topic {
			return fmt.Errorf("%w: %q", ErrTopicExists, topic)
		}
		if collisionKey(t) == key {
			return fmt.Errorf("%w: %q collides with existing topic %q", ErrTopicCollision, topic, t)
		}
	}
	if marked, _, err := c.Exists(DeleteTopicPath(topic)); err != nil {
		return err
	} else if marked {
		return fmt.Errorf("%w: %q is marked for deletion", ErrTopicExists, topic)
	}
	cfgPath, cfgData := EntityConfigPath(ConfigTypeTopic, topic), EncodeEntityConfig(config)
	a := TopicAssignment{Partitions: assignment, TopicID: topicID}
	// Both znodes in one multi (one round trip instead of three, and
	// atomic). When it cannot be (a config znode already there, a parent
	// missing), Kafka's two writes, config first.
	_, err = c.Multi(CreateOp{Path: cfgPath, Data: cfgData, Mode: Persistent},
		CreateOp{Path: TopicPath(topic), Data: a.Encode(), Mode: Persistent})
	var me *MultiError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &me) && me.Index == 1 && errors.Is(err, ErrNodeExists):
		return fmt.Errorf("%w: %q", ErrTopicExists, topic)
	case !errors.As(err, &me) || me.Index < 0 || !(errors.Is(err, ErrNodeExists) || errors.Is(err, ErrNoNode)):
		return err
	}
	if err := c.setOrCreate(cfgPath, cfgData); err != nil {
		return err
	}
	if _, err := c.CreateRecursive(TopicPath(topic), a.Encode(), Persistent); err != nil {
		if errors.Is(err, ErrNodeExists) {
			return fmt.Errorf("%w: %q", ErrTopicExists, topic)
		}
		return err
	}
	return nil
}

// setOrCreate sets path's data unconditionally, creating it (and parents)
// when missing. Last writer wins, as for Kafka's config znodes.
func (c *Client) setOrCreate(path string, data []byte) error {
	for attempt := 0; attempt < 3; attempt++ {
		_, err := c.Set(path, data, AnyVersion)
		if !errors.Is(err, ErrNoNode) {
			return err
		}
		_, err = c.CreateRecursive(path, data, Persistent)
		if !errors.Is(err, ErrNodeExists) {
			return err
		}
	}
	return fmt.Errorf("zkutil: %s keeps appearing and vanishing", path)
}

// SetTopicAssignment rewrites /brokers/topics/<t> if its zkVersion is
// expectedVersion (AnyVersion: always) and returns the new zkVersion. It is
// the admin-side write (adding partitions); the controller uses
// SetTopicAssignmentFenced.
func (c *Client) SetTopicAssignment(topic string, a TopicAssignment, expectedVersion int32) (int32, error) {
	st, err := c.Set(TopicPath(topic), a.Encode(), expectedVersion)
	if err != nil {
		return 0, err
	}
	return st.Version, nil
}

// SetTopicAssignmentFenced is SetTopicAssignment fenced by the controller
// epoch zkVersion. Errors: ErrControllerMoved, ErrBadVersion, ErrNoNode.
func (c *Client) SetTopicAssignmentFenced(topic string, a TopicAssignment, expectedVersion, epochZkVersion int32) (int32, error) {
	res, err := c.fencedMulti(epochZkVersion, SetOp{Path: TopicPath(topic), Data: a.Encode(), Version: expectedVersion})
	if err != nil {
		return 0, err
	}
	return res[0].Stat.Version, nil
}

// MarkTopicForDeletion creates /admin/delete_topics/<t>. Errors:
// ErrMarkedForDeletion when the marker exists.
func (c *Client) MarkTopicForDeletion(topic string) error {
	_, err := c.CreateRecursive(DeleteTopicPath(topic), nil, Persistent)
	if errors.Is(err, ErrNodeExists) {
		return fmt.Errorf("%w: %q", ErrMarkedForDeletion, topic)
	}
	return err
}

// GetTopicsMarkedForDeletion returns the children of /admin/delete_topics, sorted.
func (c *Client) GetTopicsMarkedForDeletion() ([]string, error) {
	return c.sortedChildren(DeleteTopicsPath(), "")
}

// maxOpsPerMulti keeps each multi well under ZooKeeper's 1 MiB packet limit.
const maxOpsPerMulti = 1000

// DeleteTopicZNodes removes /brokers/topics/<t> with all its partition
// znodes, and /config/topics/<t>, every delete fenced by epochZkVersion (the
// end of Kafka's topic deletion). Missing znodes are not errors.
func (c *Client) DeleteTopicZNodes(topic string, epochZkVersion int32) error {
	for attempt := 0; ; attempt++ {
		err := c.deleteTreeFenced(TopicPath(topic), epochZkVersion)
		if err == nil {
			break
		}
		if attempt >= 2 || !(errors.Is(err, ErrNotEmpty) || errors.Is(err, ErrNoNode)) || errors.Is(err, ErrControllerMoved) {
			return err
		}
	}
	return c.deleteFenced(EntityConfigPath(ConfigTypeTopic, topic), epochZkVersion)
}

// deleteTreeFenced deletes root and its subtree leaves first, in fenced
// multis of at most maxOpsPerMulti deletes.
func (c *Client) deleteTreeFenced(root string, epochZkVersion int32) error {
	var order []string
	var walk func(p string) error
	walk = func(p string) error {
		children, err := c.Children(p)
		if errors.Is(err, ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, ch := range children {
			if err := walk(p + "/" + ch); err != nil {
				return err
			}
		}
		order = append(order, p)
		return nil
	}
	if err := walk(root); err != nil {
		return err
	}
	for len(order) > 0 {
		n := min(len(order), maxOpsPerMulti)
		ops := make([]Op, n)
		for i, p := range order[:n] {
			ops[i] = DeleteOp{Path: p, Version: AnyVersion}
		}
		if _, err := c.fencedMulti(epochZkVersion, ops...); err != nil {
			return err
		}
		order = order[n:]
	}
	return nil
}

// deleteFenced deletes one znode fenced by epochZkVersion; NoNode is fine.
func (c *Client) deleteFenced(path string, epochZkVersion int32) error {
	_, err := c.fencedMulti(epochZkVersion, DeleteOp{Path: path, Version: AnyVersion})
	if errors.Is(err, ErrNoNode) && !errors.Is(err, ErrControllerMoved) {
		return nil
	}
	return err
}

// DeleteTopicDeletionMark removes /admin/delete_topics/<t>, fenced by
// epochZkVersion. A missing marker is not an error.
func (c *Client) DeleteTopicDeletionMark(topic string, epochZkVersion int32) error {
	return c.deleteFenced(DeleteTopicPath(topic), epochZkVersion)
}
