package controller

import (
	"encoding/base64"
	"slices"

	"samsa/zkutil"
)

// newTopicID returns a random KIP-516 topic id (zkutil.NewTopicID: never zero, its base64
// form never starts with '-').
func newTopicID() [16]byte { return decodeTopicID(zkutil.NewTopicID()) }

// assignMissingTopicIDs gives every topic in topics without an id a new one, written to
// its assignment znode (Kafka 2.8's processTopicIds, IBP >= 2.8-IV0).
func (c *Controller) assignMissingTopicIDs(topics []string) error {
	cc := c.cc
	for _, t := range topics {
		if _, known := cc.assignments[t]; !known || cc.topicIDs[t] != ([16]byte{}) {
			continue
		}
		id, err := c.store.SetTopicID(cc.epochZkVersion, t, newTopicID())
		if err != nil {
			if isControllerMoved(err) {
				return err
			}
			c.log.WithError(err).WithField("topic", t).Warn("controller: cannot assign a topic id")
			continue
		}
		cc.topicIDs[t] = id
		c.log.WithField("topic", t).WithField("topic_id", base64.RawURLEncoding.EncodeToString(id[:])).
			Info("controller: assigned topic id")
	}
	return nil
}

// topicsSorted returns the known topics, sorted.
func (cc *controllerContext) topicsSorted() []string {
	out := make([]string, 0, len(cc.assignments))
	for t := range cc.assignments {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
