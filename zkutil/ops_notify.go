package zkutil

import (
	"errors"
	"sort"

	"samsa/kafka"
)

// createSequential creates a persistent-sequential child parent/prefix<seq>,
// creating parent first when missing, and returns the child's name.
func (c *Client) createSequential(parent, prefix string, data []byte) (string, error) {
	p, err := c.Create(parent+"/"+prefix, data, PersistentSequential)
	if errors.Is(err, ErrNoNode) {
		if err := c.EnsurePath(parent); err != nil {
			return "", err
		}
		p, err = c.Create(parent+"/"+prefix, data, PersistentSequential)
	}
	if err != nil {
		return "", err
	}
	return p[len(parent)+1:], nil
}

// sortedChildren returns the children of parent starting with prefix, sorted
// (ZooKeeper's zero-padded sequence numbers sort as strings). A missing
// parent yields an empty list.
func (c *Client) sortedChildren(parent, prefix string) ([]string, error) {
	names, err := c.Children(parent)
	if errors.Is(err, ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := names[:0]
	for _, n := range names {
		if len(n) >= len(prefix) && n[:len(prefix)] == prefix {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// deleteChildrenFenced deletes parent/<node> for each node, each fenced by
// epochZkVersion; nodes already gone are fine.
func (c *Client) deleteChildrenFenced(parent string, nodes []string, epochZkVersion int32) error {
	errs := make([]error, len(nodes))
	parallel(len(nodes), func(i int) { errs[i] = c.deleteFenced(parent+"/"+nodes[i], epochZkVersion) })
	return errors.Join(errs...)
}

// WriteIsrChangeNotification creates
// /isr_change_notification/isr_change_<seq> naming the partitions whose ISR
// the leader changed (Kafka propagateIsrChanges).
func (c *Client) WriteIsrChangeNotification(tps []kafka.TopicPartition) error {
	_, err := c.createSequential(IsrChangeNotificationPath(), IsrChangeSeqPrefix, EncodeIsrChangeNotification(tps))
	return err
}

// GetIsrChangeNotifications returns the isr_change_ child names in sequence order.
func (c *Client) GetIsrChangeNotifications() ([]string, error) {
	return c.sortedChildren(IsrChangeNotificationPath(), IsrChangeSeqPrefix)
}

// ReadIsrChangeNotification reads one notification by child name. Errors:
// ErrNoNode, ErrMalformed.
func (c *Client) ReadIsrChangeNotification(node string) ([]kafka.TopicPartition, error) {
	data, _, err := c.Get(IsrChangeNotificationSeqPath(node))
	if err != nil {
		return nil, err
	}
	return DecodeIsrChangeNotification(data)
}

// DeleteIsrChangeNotifications deletes processed notifications, fenced by
// epochZkVersion. Errors wrap ErrControllerMoved when the fence failed.
func (c *Client) DeleteIsrChangeNotifications(nodes []string, epochZkVersion int32) error {
	return c.deleteChildrenFenced(IsrChangeNotificationPath(), nodes, epochZkVersion)
}

// WriteLogDirEventNotification creates
// /log_dir_event_notification/log_dir_event_<seq> for a failed log dir.
func (c *Client) WriteLogDirEventNotification(brokerID int32) error {
	_, err := c.createSequential(LogDirEventNotificationPath(), LogDirEventSeqPrefix, EncodeLogDirEvent(brokerID))
	return err
}

// GetLogDirEventNotifications returns the log_dir_event_ child names in order.
func (c *Client) GetLogDirEventNotifications() ([]string, error) {
	return c.sortedChildren(LogDirEventNotificationPath(), LogDirEventSeqPrefix)
}

// ReadLogDirEventNotification returns the broker id of one notification.
func (c *Client) ReadLogDirEventNotification(node string) (int32, error) {
	data, _, err := c.Get(LogDirEventNotificationPath() + "/" + node)
	if err != nil {
		return 0, err
	}
	return DecodeLogDirEvent(data)
}

// DeleteLogDirEventNotifications deletes processed notifications, fenced.
func (c *Client) DeleteLogDirEventNotifications(nodes []string, epochZkVersion int32) error {
	return c.deleteChildrenFenced(LogDirEventNotificationPath(), nodes, epochZkVersion)
}
