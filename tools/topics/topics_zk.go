package topics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/sirupsen/logrus"

	"samsa/assign"
	"samsa/config"
	"samsa/kafka"
	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

// ZKTopicService is kafka-topics --zookeeper (Kafka 2.8
// ZookeeperTopicService): it reads and writes the znodes directly and lets
// the controller act on them.
type ZKTopicService struct {
	zk *zkutil.Client
}

func NewZKTopicService(connect string, log logrus.FieldLogger) (*ZKTopicService, error) {
	ctx, cancel := context.WithTimeout(context.Background(), tool.ZKTimeout)
	defer cancel()
	zk, err := zkutil.Connect(ctx, zkutil.Config{
		Connect: connect, SessionTimeout: tool.ZKTimeout, ConnectionTimeout: tool.ZKTimeout, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	return &ZKTopicService{zk: zk}, nil
}

// Close ends the ZooKeeper session.
func (s *ZKTopicService) Close() { s.zk.Close() }

// Client is the ZooKeeper client, for tools that read and write znodes of
// their own (kafka-reassign-partitions, kafka-leader-election --zookeeper).
func (s *ZKTopicService) Client() *zkutil.Client { return s.zk }

func (s *ZKTopicService) topics(o *topicOpts) ([]string, error) {
	all, err := s.zk.GetAllTopics()
	if err != nil {
		return nil, err
	}
	return filterTopics(all, o)
}

func (s *ZKTopicService) markedForDeletion() (map[string]bool, error) {
	marked, err := s.zk.GetTopicsMarkedForDeletion()
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return nil, err
	}
	out := make(map[string]bool, len(marked))
	for _, t := range marked {
		out[t] = true
	}
	return out, nil
}

func (s *ZKTopicService) listTopics(o *topicOpts, out io.Writer) error {
	topics, err := s.topics(o)
	if err != nil {
		return err
	}
	marked, err := s.markedForDeletion()
	if err != nil {
		return err
	}
	for _, t := range topics {
		if marked[t] {
			fmt.Fprintf(out, "%s - marked for deletion\n", t)
		} else {
			fmt.Fprintln(out, t)
		}
	}
	return nil
}

func (s *ZKTopicService) describeTopics(o *topicOpts, out io.Writer) error {
	topics, err := existingTopics(s.topics, o)
	if err != nil {
		return err
	}
	ids, err := s.zk.GetBrokerIDs()
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return err
	}
	live := make(map[int32]bool, len(ids))
	for _, id := range ids {
		live[id] = true
	}
	marked, err := s.markedForDeletion()
	if err != nil {
		return err
	}
	d := newDescribeOpts(o, live)
	for _, t := range topics {
		info, ok, err := s.topicInfo(t, marked[t])
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintf(out, "Topic %s doesn't exist!\n", t)
			continue
		}
		writeTopicDescription(out, info, d)
	}
	return nil
}

// topicInfo gathers one topic's assignment, states and overrides; ok is
// false when the topic vanished meanwhile.
func (s *ZKTopicService) topicInfo(topic string, marked bool) (topicInfo, bool, error) {
	a, _, err := s.zk.GetTopicAssignment(topic)
	if errors.Is(err, zkutil.ErrNoNode) {
		return topicInfo{}, false, nil
	}
	if err != nil {
		return topicInfo{}, false, err
	}
	cfg, err := s.zk.GetEntityConfig(zkutil.ConfigTypeTopic, topic)
	if err != nil {
		return topicInfo{}, false, err
	}
	tps := make([]kafka.TopicPartition, 0, len(a.Partitions))
	for p := range a.Partitions {
		tps = append(tps, kafka.TopicPartition{Topic: topic, Partition: p})
	}
	states, err := s.zk.GetPartitionStates(tps)
	if err != nil {
		return topicInfo{}, false, err
	}
	info := topicInfo{Name: topic, TopicID: a.TopicID, MarkedForDeletion: marked}
	for _, k := range tool.SortedKeys(cfg) {
		info.Configs = append(info.Configs, configKV{k, cfg[k]})
	}
	for _, tp := range tps {
		p := partInfo{ID: tp.Partition, Leader: -1, Replicas: a.Partitions[tp.Partition]}
		if st, ok := states[tp]; ok {
			p.Leader, p.ISR = st.State.Leader, st.State.ISR
		}
		info.Partitions = append(info.Partitions, p)
	}
	sort.Slice(info.Partitions, func(i, j int) bool { return info.Partitions[i].ID < info.Partitions[j].ID })
	return info, true, nil
}

func (s *ZKTopicService) createTopic(o *topicOpts, out io.Writer) error {
	if err := config.ValidateTopicOverrides(o.configs); err != nil {
		return err
	}
	assignment := o.replicaAssignment
	if assignment == nil {
		if o.partitions < 1 {
			return tool.Error("The partitions must be greater than 0")
		}
		if o.replicationFactor < 1 || o.replicationFactor > 32767 {
			return tool.Error("The replication factor must be between 1 and 32767 inclusive")
		}
		brokers, err := s.BrokerMetas(o.disableRackAware)
		if err != nil {
			return err
		}
		if int(o.replicationFactor) > len(brokers) {
			return tool.Errorf("Replication factor: %d larger than available brokers: %d.", o.replicationFactor, len(brokers))
		}
		assignment, err = assign.Replicas(brokers, int(o.partitions), int(o.replicationFactor), -1, 0, nil)
		if err != nil {
			return AssignmentError(err)
		}
	}
	err := s.zk.CreateTopic(o.topic, assignment, o.configs)
	switch {
	case errors.Is(err, zkutil.ErrTopicExists):
		if o.ifNotExists {
			return nil
		}
		return tool.Errorf("Topic '%s' already exists.", o.topic)
	case errors.Is(err, zkutil.ErrTopicCollision), errors.Is(err, zkutil.ErrInvalidTopic):
		return err
	case err != nil:
		return err
	}
	fmt.Fprintf(out, "Created topic %s.\n", o.topic)
	return nil
}

// BrokerMetas lists live brokers sorted by id, as AdminZkClient does, with
// racks unless rack awareness is disabled.
func (s *ZKTopicService) BrokerMetas(disableRack bool) ([]assign.Broker, error) {
	all, err := s.zk.GetAllBrokers()
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return nil, err
	}
	metas := make([]assign.Broker, 0, len(all))
	for id, b := range all {
		m := assign.Broker{ID: id}
		if !disableRack {
			m.Rack = b.Registration.Rack
		}
		metas = append(metas, m)
	}
	sort.Slice(metas, func(i, j int) bool { return metas[i].ID < metas[j].ID })
	return metas, nil
}

// AssignmentError words assign.Replicas errors as Kafka's tool.
func AssignmentError(err error) error {
	switch {
	case errors.Is(err, assign.ErrInvalidReplicationFactor), errors.Is(err, assign.ErrInvalidPartitions):
		return tool.Error(trimPkg(err.Error()))
	case errors.Is(err, assign.ErrRackInfoIncomplete):
		return tool.Error("Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information.")
	}
	return err
}

func (s *ZKTopicService) alterTopic(o *topicOpts, out io.Writer) error {
	topics, err := existingTopics(s.topics, o)
	if err != nil {
		return err
	}
	for _, t := range topics {
		if len(o.configs) > 0 || len(o.deleteConfigs) > 0 {
			fmt.Fprintln(out, "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future releases.")
			fmt.Fprintln(out, "         Going forward, please use kafka-configs.sh for this functionality")
			cfg, err := s.zk.GetEntityConfig(zkutil.ConfigTypeTopic, t)
			if err != nil {
				return err
			}
			for k, v := range o.configs {
				cfg[k] = v
			}
			for _, k := range o.deleteConfigs {
				delete(cfg, k)
			}
			if err := config.ValidateTopicOverrides(cfg); err != nil {
				return err
			}
			if err := s.zk.SetEntityConfig(zkutil.ConfigTypeTopic, t, cfg); err != nil {
				return err
			}
			fmt.Fprintf(out, "Updated config for topic %s.\n", t)
		}
		if o.hasPartitions {
			if err := s.addPartitions(t, o, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// addPartitions follows AdminZkClient.addPartitions: the new partitions
// continue the existing round-robin (start index = position of partition
// 0's first replica) unless --replica-assignment lists them.
func (s *ZKTopicService) addPartitions(topic string, o *topicOpts, out io.Writer) error {
	if internalTopics[topic] {
		return tool.Error("The number of partitions for the internal topics[__consumer_offsets,__transaction_state] cannot be changed.")
	}
	fmt.Fprintln(out, "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected")
	a, version, err := s.zk.GetTopicAssignment(topic)
	if errors.Is(err, zkutil.ErrNoNode) || (err == nil && len(a.Partitions) == 0) {
		return tool.Errorf("The topic %s does not exist", topic)
	}
	if err != nil {
		return err
	}
	existing := int32(len(a.Partitions))
	toAdd := o.partitions - existing
	if toAdd <= 0 {
		return tool.Errorf("The number of partitions for a topic can only be increased. Topic %s currently has %d partitions, %d would not be an increase.", topic, existing, o.partitions)
	}
	brokers, err := s.BrokerMetas(o.disableRackAware)
	if err != nil {
		return err
	}
	var added map[int32][]int32
	if o.replicaAssignment != nil {
		added = make(map[int32][]int32)
		for p := existing; p < o.partitions; p++ {
			r, ok := o.replicaAssignment[p]
			if !ok {
				return tool.Errorf("Increasing the number of partitions by %d but %d assignments provided.", toAdd, int32(len(o.replicaAssignment))-existing)
			}
			added[p] = r
		}
		if err := checkBrokersExist(added, brokers); err != nil {
			return err
		}
	} else {
		first := a.Partitions[0]
		added, err = assign.Replicas(brokers, int(toAdd), len(first), assign.StartIndex(brokers, first), int(existing), nil)
		if err != nil {
			return AssignmentError(err)
		}
	}
	for p, r := range added {
		a.Partitions[p] = r
	}
	if _, err := s.zk.SetTopicAssignment(topic, a, version); err != nil {
		return err
	}
	fmt.Fprintln(out, "Adding partitions succeeded!")
	return nil
}

func checkBrokersExist(assignment map[int32][]int32, brokers []assign.Broker) error {
	live := make(map[int32]bool, len(brokers))
	for _, b := range brokers {
		live[b.ID] = true
	}
	for _, replicas := range assignment {
		for _, r := range replicas {
			if !live[r] {
				return tool.Errorf("Unknown broker id %d in the replica assignment", r)
			}
		}
	}
	return nil
}

func (s *ZKTopicService) deleteTopics(o *topicOpts, out io.Writer) error {
	topics, err := existingTopics(s.topics, o)
	if err != nil {
		return err
	}
	for _, t := range topics {
		if internalTopics[t] {
			return tool.Errorf("Topic %s is a kafka internal topic and is not allowed to be marked for deletion.", t)
		}
		err := s.zk.MarkTopicForDeletion(t)
		switch {
		case errors.Is(err, zkutil.ErrMarkedForDeletion):
			fmt.Fprintf(out, "Topic %s is already marked for deletion.\n", t)
		case err != nil:
			return tool.Errorf("Error while deleting topic %s: %v", t, err)
		default:
			fmt.Fprintf(out, "Topic %s is marked for deletion.\n", t)
			fmt.Fprintln(out, "Note: This will have no impact if delete.topic.enable is not set to true.")
		}
	}
	return nil
}

// trimPkg drops a Go package prefix ("controller: ") from an error message
// shown to users.
func trimPkg(msg string) string {
	for i := 0; i < len(msg) && i < 20; i++ {
		if msg[i] == ':' && i+1 < len(msg) && msg[i+1] == ' ' {
			return msg[i+2:]
		}
	}
	return msg
}
