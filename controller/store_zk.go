package controller

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"samsa/kafka"
	"samsa/zkutil"
)

// zkStore implements Store over a *zkutil.Client. It adds no paths or codecs of its own: it
// converts between zkutil's types and the controller's, and wraps zkutil's sentinels with the
// controller's (errors.Is matches both).
type zkStore struct {
	zk *zkutil.Client
}

// StoreFromZK returns the Store backed by a zkutil Client (New does this for Config.ZK).
func StoreFromZK(c *zkutil.Client) Store { return zkStore{zk: c} }

// wrapErr adds the controller's sentinel to zkutil errors the controller branches on.
func wrapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zkutil.ErrControllerMoved):
		return fmt.Errorf("%w: %w", ErrControllerMoved, err)
	case errors.Is(err, zkutil.ErrBadVersion):
		return fmt.Errorf("%w: %w", ErrZkVersionConflict, err)
	case errors.Is(err, zkutil.ErrNodeExists):
		return fmt.Errorf("%w: %w", ErrStateExists, err)
	}
	return err
}

func (s zkStore) ElectController(brokerID int32) (int32, int32, error) {
	e, v, err := s.zk.ElectController(brokerID)
	return e, v, wrapErr(err)
}

func (s zkStore) ControllerID() (int32, error) {
	id, err := s.zk.GetController()
	if errors.Is(err, zkutil.ErrNoNode) {
		return -1, nil
	}
	return id, wrapErr(err)
}

func (s zkStore) ControllerEpoch() (int32, int32, error) {
	e, v, err := s.zk.GetControllerEpoch()
	return e, v, wrapErr(err)
}

func (s zkStore) DeleteController(epochZkVersion int32) error {
	return wrapErr(s.zk.DeleteController(epochZkVersion))
}

func (s zkStore) Brokers() (map[int32]LiveBroker, error) {
	infos, err := s.zk.GetAllBrokers()
	if err != nil {
		return nil, wrapErr(err)
	}
	out := make(map[int32]LiveBroker, len(infos))
	for id, info := range infos {
		b := LiveBroker{ID: id, Epoch: info.Epoch, Rack: info.Registration.Rack}
		for _, ep := range info.Registration.Endpoints {
			b.Endpoints = append(b.Endpoints, Endpoint{Listener: ep.ListenerName, SecurityProtocol: ep.SecurityProtocol, Host: ep.Host, Port: ep.Port})
		}
		out[id] = b
	}
	return out, nil
}

func (s zkStore) Topics() ([]string, error) {
	t, err := s.zk.GetAllTopics()
	return t, wrapErr(err)
}

func (s zkStore) TopicAssignments(topics []string) (map[string]TopicAssignment, error) {
	as, err := s.zk.GetTopicAssignments(topics)
	if err != nil {
		return nil, wrapErr(err)
	}
	out := make(map[string]TopicAssignment, len(as))
	for t, va := range as {
		out[t] = TopicAssignment{TopicID: decodeTopicID(va.Assignment.TopicID), Partitions: va.Assignment.Partitions,
			Adding: va.Assignment.AddingReplicas, Removing: va.Assignment.RemovingReplicas}
	}
	return out, nil
}

// decodeTopicID turns Kafka's 22-character URL-safe base64 Uuid into its 16 bytes; anything
// else is the zero id.
func decodeTopicID(s string) [16]byte {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err == nil && len(b) == 16 {
		copy(id[:], b)
	}
	return id
}

func toZKState(l LeaderAndIsr) zkutil.PartitionState {
	return zkutil.PartitionState{Leader: l.Leader, LeaderEpoch: l.LeaderEpoch, ISR: l.Isr, ControllerEpoch: l.ControllerEpoch}
}

func (s zkStore) PartitionStates(tps []kafka.TopicPartition) (map[kafka.TopicPartition]LeaderAndIsr, error) {
	states, err := s.zk.GetPartitionStates(tps)
	if err != nil {
		return nil, wrapErr(err)
	}
	out := make(map[kafka.TopicPartition]LeaderAndIsr, len(states))
	for tp, vs := range states {
		out[tp] = LeaderAndIsr{
			Leader: vs.State.Leader, LeaderEpoch: vs.State.LeaderEpoch, Isr: vs.State.ISR,
			ControllerEpoch: vs.State.ControllerEpoch, ZkVersion: vs.ZkVersion,
		}
	}
	return out, nil
}

func (s zkStore) CreatePartitionStates(epochZkVersion int32, states map[kafka.TopicPartition]LeaderAndIsr) (map[kafka.TopicPartition]StoreResult, error) {
	in := make(map[kafka.TopicPartition]zkutil.PartitionState, len(states))
	for tp, l := range states {
		in[tp] = toZKState(l)
	}
	errs := s.zk.CreatePartitionStates(epochZkVersion, in)
	out := make(map[kafka.TopicPartition]StoreResult, len(states))
	for tp := range states {
		err := wrapErr(errs[tp])
		if isControllerMoved(err) {
			return nil, err
		}
		out[tp] = StoreResult{ZkVersion: 0, Err: err}
	}
	return out, nil
}

func (s zkStore) UpdatePartitionStates(epochZkVersion int32, states map[kafka.TopicPartition]LeaderAndIsr) (map[kafka.TopicPartition]StoreResult, error) {
	in := make(map[kafka.TopicPartition]zkutil.VersionedState, len(states))
	for tp, l := range states {
		in[tp] = zkutil.VersionedState{State: toZKState(l), ZkVersion: l.ZkVersion}
	}
	versions, errs := s.zk.UpdatePartitionStates(epochZkVersion, in)
	out := make(map[kafka.TopicPartition]StoreResult, len(states))
	for tp := range states {
		if err := wrapErr(errs[tp]); err != nil {
			if isControllerMoved(err) {
				return nil, err
			}
			out[tp] = StoreResult{Err: err}
			continue
		}
		out[tp] = StoreResult{ZkVersion: versions[tp]}
	}
	return out, nil
}

// uncleanLeaderElectionKey is the topic-level config key (Kafka's LogConfig).
const uncleanLeaderElectionKey = "unclean.leader.election.enable"

func (s zkStore) UncleanLeaderElectionEnable(topic string) (bool, bool, error) {
	cfg, err := s.zk.GetEntityConfig(zkutil.ConfigTypeTopic, topic)
	if err != nil {
		return false, false, wrapErr(err)
	}
	v, ok := cfg[uncleanLeaderElectionKey]
	if !ok {
		return false, false, nil
	}
	return strings.EqualFold(strings.TrimSpace(v), "true"), true, nil
}

func (s zkStore) IsrChangeNotifications() ([]string, error) {
	n, err := s.zk.GetIsrChangeNotifications()
	if errors.Is(err, zkutil.ErrNoNode) {
		return nil, nil
	}
	return n, wrapErr(err)
}

func (s zkStore) ReadIsrChangeNotification(name string) ([]kafka.TopicPartition, error) {
	tps, err := s.zk.ReadIsrChangeNotification(name)
	if err != nil {
		return nil, wrapErr(err)
	}
	return tps, nil
}

func (s zkStore) DeleteIsrChangeNotifications(epochZkVersion int32, names []string) error {
	if names == nil {
		var err error
		if names, err = s.IsrChangeNotifications(); err != nil {
			return err
		}
	}
	if len(names) == 0 {
		return nil
	}
	return wrapErr(s.zk.DeleteIsrChangeNotifications(names, epochZkVersion))
}

func (s zkStore) LogDirEventNotifications() ([]string, error) {
	n, err := s.zk.GetLogDirEventNotifications()
	if errors.Is(err, zkutil.ErrNoNode) {
		return nil, nil
	}
	return n, wrapErr(err)
}

func (s zkStore) ReadLogDirEventNotification(name string) (int32, int, error) {
	id, ev, err := s.zk.ReadLogDirEvent(name)
	return id, ev, wrapErr(err)
}

func (s zkStore) DeleteLogDirEventNotifications(epochZkVersion int32, names []string) error {
	if names == nil {
		var err error
		if names, err = s.LogDirEventNotifications(); err != nil {
			return err
		}
	}
	if len(names) == 0 {
		return nil
	}
	return wrapErr(s.zk.DeleteLogDirEventNotifications(names, epochZkVersion))
}

func (s zkStore) TopicsMarkedForDeletion() ([]string, error) {
	t, err := s.zk.GetTopicsMarkedForDeletion()
	if errors.Is(err, zkutil.ErrNoNode) {
		return nil, nil
	}
	return t, wrapErr(err)
}

func (s zkStore) DeleteTopicDeletionMarks(epochZkVersion int32, topics []string) error {
	for _, t := range topics {
		if err := s.zk.DeleteTopicDeletionMark(t, epochZkVersion); err != nil {
			return wrapErr(err)
		}
	}
	return nil
}

func (s zkStore) DeleteTopic(epochZkVersion int32, topic string) error {
	if err := s.zk.DeleteTopicZNodes(topic, epochZkVersion); err != nil {
		return wrapErr(err)
	}
	return wrapErr(s.zk.DeleteTopicDeletionMark(topic, epochZkVersion))
}

func (s zkStore) SetTopicID(epochZkVersion int32, topic string, id [16]byte) ([16]byte, error) {
	a, v, err := s.zk.GetTopicAssignment(topic)
	if err != nil {
		return [16]byte{}, wrapErr(err)
	}
	if existing := decodeTopicID(a.TopicID); existing != ([16]byte{}) {
		return existing, nil
	}
	a.TopicID = base64.RawURLEncoding.EncodeToString(id[:])
	if _, err := s.zk.SetTopicAssignmentFenced(topic, a, v, epochZkVersion); err != nil {
		return [16]byte{}, wrapErr(err)
	}
	return id, nil
}

func (s zkStore) SetTopicAssignment(epochZkVersion int32, topic string, ta TopicAssignment) error {
	a, _, err := s.zk.GetTopicAssignment(topic)
	if err != nil {
		return wrapErr(err)
	}
	a.Partitions, a.AddingReplicas, a.RemovingReplicas = ta.Partitions, nonNil(ta.Adding), nonNil(ta.Removing)
	// Unconditional but fenced, as Kafka's setTopicAssignmentRaw (MatchAnyVersion).
	_, err = s.zk.SetTopicAssignmentFenced(topic, a, zkutil.AnyVersion, epochZkVersion)
	return wrapErr(err)
}

func nonNil(m map[int32][]int32) map[int32][]int32 {
	if m == nil {
		return map[int32][]int32{}
	}
	return m
}

func (s zkStore) PartitionReassignment() (map[kafka.TopicPartition][]int32, error) {
	r, err := s.zk.GetPartitionReassignment()
	if err != nil {
		return nil, wrapErr(err)
	}
	if r == nil {
		r = map[kafka.TopicPartition][]int32{} // callers add to it
	}
	return r, nil
}

func (s zkStore) SetPartitionReassignment(epochZkVersion int32, r map[kafka.TopicPartition][]int32) error {
	return wrapErr(s.zk.SetPartitionReassignment(r, epochZkVersion))
}

func (s zkStore) WatchPartitionReassignment(fn func()) func() {
	return s.zk.WatchExists(zkutil.ReassignPartitionsPath(), fn)
}

func (s zkStore) WatchPartitionState(tp kafka.TopicPartition, fn func()) func() {
	return s.zk.WatchData(zkutil.PartitionStatePath(tp.Topic, tp.Partition), fn)
}

func (s zkStore) PreferredReplicaElection() ([]kafka.TopicPartition, error) {
	tps, err := s.zk.GetPreferredReplicaElection()
	if errors.Is(err, zkutil.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapErr(err)
	}
	return tps, nil
}

func (s zkStore) DeletePreferredReplicaElection(epochZkVersion int32) error {
	return wrapErr(s.zk.DeletePreferredReplicaElection(epochZkVersion))
}

func (s zkStore) WatchPreferredReplicaElection(fn func()) func() {
	return s.zk.WatchExists(zkutil.PreferredReplicaElectionPath(), fn)
}

func (s zkStore) WatchController(fn func()) func() {
	return s.zk.WatchExists(zkutil.ControllerPath(), fn)
}

func (s zkStore) WatchBrokers(fn func()) func() {
	return s.zk.WatchChildren(zkutil.BrokerIDsPath(), fn)
}

func (s zkStore) WatchBroker(id int32, fn func()) func() {
	return s.zk.WatchData(zkutil.BrokerIDPath(id), fn)
}

func (s zkStore) WatchTopics(fn func()) func() {
	return s.zk.WatchChildren(zkutil.TopicsPath(), fn)
}

func (s zkStore) WatchTopic(topic string, fn func()) func() {
	return s.zk.WatchData(zkutil.TopicPath(topic), fn)
}

func (s zkStore) WatchIsrChangeNotifications(fn func()) func() {
	return s.zk.WatchChildren(zkutil.IsrChangeNotificationPath(), fn)
}

func (s zkStore) WatchLogDirEventNotifications(fn func()) func() {
	return s.zk.WatchChildren(zkutil.LogDirEventNotificationPath(), fn)
}

func (s zkStore) WatchTopicDeletions(fn func()) func() {
	return s.zk.WatchChildren(zkutil.DeleteTopicsPath(), fn)
}

// OnNewSession registers fn with zkutil, which has no way to unregister a hook; the returned
// cancel disables it instead.
func (s zkStore) OnNewSession(fn func()) func() {
	var off atomic.Bool
	s.zk.OnNewSession(func() {
		if !off.Load() {
			fn()
		}
	})
	return func() { off.Store(true) }
}
