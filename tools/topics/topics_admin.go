package topics

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/IBM/sarama"

	"samsa/tools/internal/tool"
)

// adminTopicService is kafka-topics --bootstrap-server (Kafka 2.8
// AdminClientTopicService) on a Sarama client and ClusterAdmin.
type adminTopicService struct {
	client sarama.Client
	admin  sarama.ClusterAdmin
}

func newAdminTopicService(bootstrap, commandConfig string) (*adminTopicService, error) {
	cfg, err := tool.NewSaramaConfig("samsa-kafka-topics", commandConfig, nil)
	if err != nil {
		return nil, err
	}
	client, err := sarama.NewClient(tool.SplitList(bootstrap), cfg)
	if err != nil {
		return nil, err
	}
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		client.Close()
		return nil, err
	}
	return &adminTopicService{client: client, admin: admin}, nil
}

func (s *adminTopicService) Close() { s.admin.Close() }

func (s *adminTopicService) topics(o *topicOpts) ([]string, error) {
	if err := s.client.RefreshMetadata(); err != nil {
		return nil, err
	}
	all, err := s.client.Topics()
	if err != nil {
		return nil, err
	}
	return filterTopics(all, o)
}

func (s *adminTopicService) listTopics(o *topicOpts, out io.Writer) error {
	topics, err := s.topics(o)
	if err != nil {
		return err
	}
	// Kafka prints mkString("\n") with println: one empty line when there
	// are no topics.
	fmt.Fprintln(out, strings.Join(topics, "\n"))
	return nil
}

func (s *adminTopicService) describeTopics(o *topicOpts, out io.Writer) error {
	topics, err := existingTopics(s.topics, o)
	if err != nil {
		return err
	}
	if len(topics) == 0 {
		return nil
	}
	live := make(map[int32]bool)
	for _, b := range s.client.Brokers() {
		live[b.ID()] = true
	}
	metas, err := s.admin.DescribeTopics(topics)
	if err != nil {
		return err
	}
	sort.Slice(metas, func(i, j int) bool { return metas[i].Name < metas[j].Name })
	infos := make([]topicInfo, 0, len(metas))
	for _, m := range metas {
		if !errors.Is(m.Err, sarama.ErrNoError) {
			return m.Err
		}
		info, err := s.topicInfo(m)
		if err != nil {
			return err
		}
		infos = append(infos, info)
	}
	d := newDescribeOpts(o, live)
	for _, info := range infos {
		writeTopicDescription(out, info, d)
	}
	return nil
}

func (s *adminTopicService) topicInfo(m *sarama.TopicMetadata) (topicInfo, error) {
	info := topicInfo{Name: m.Name}
	if m.Uuid != (sarama.Uuid{}) {
		info.TopicID = m.Uuid.String()
	}
	entries, err := s.admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: m.Name})
	if errors.Is(err, sarama.ErrUnsupportedVersion) {
		// A broker without DescribeConfigs: print the partitions anyway,
		// with no configs (Kafka's tool would fail here).
		entries, err = nil, nil
	}
	if err != nil {
		return info, err
	}
	for _, e := range entries {
		if e.Name == "min.insync.replicas" {
			info.MinISR, _ = strconv.Atoi(e.Value)
		}
		if !isDefaultConfig(e) {
			info.Configs = append(info.Configs, configKV{e.Name, e.Value})
		}
	}
	var reassigning map[int32]*sarama.PartitionReplicaReassignmentsStatus
	ids := make([]int32, 0, len(m.Partitions))
	for _, p := range m.Partitions {
		ids = append(ids, p.ID)
	}
	// Kafka ignores a failed ListPartitionReassignments (older brokers).
	if st, err := s.admin.ListPartitionReassignments(m.Name, ids); err == nil {
		reassigning = st[m.Name]
	}
	for _, p := range m.Partitions {
		pi := partInfo{ID: p.ID, Leader: p.Leader, Replicas: p.Replicas, ISR: p.Isr}
		if r, ok := reassigning[p.ID]; ok && r != nil && (len(r.AddingReplicas) > 0 || len(r.RemovingReplicas) > 0) {
			pi.Reassigning, pi.Adding, pi.Removing = true, r.AddingReplicas, r.RemovingReplicas
		}
		info.Partitions = append(info.Partitions, pi)
	}
	sort.Slice(info.Partitions, func(i, j int) bool { return info.Partitions[i].ID < info.Partitions[j].ID })
	return info, nil
}

// isDefaultConfig reports a DescribeConfigs entry whose source is
// DEFAULT_CONFIG (v1+), or that v0 flags as default.
func isDefaultConfig(e sarama.ConfigEntry) bool {
	if e.Source == sarama.SourceUnknown {
		return e.Default
	}
	return e.Source == sarama.SourceDefault
}

func (s *adminTopicService) createTopic(o *topicOpts, out io.Writer) error {
	if o.hasReplicationFactor && (o.replicationFactor < 1 || o.replicationFactor > 32767) {
		return tool.Error("The replication factor must be between 1 and 32767 inclusive")
	}
	if o.hasPartitions && o.partitions < 1 {
		return tool.Error("The partitions must be greater than 0")
	}
	detail := &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1}
	if o.hasPartitions {
		detail.NumPartitions = o.partitions
	}
	if o.hasReplicationFactor {
		detail.ReplicationFactor = int16(o.replicationFactor)
	}
	if o.replicaAssignment != nil {
		detail.ReplicaAssignment = o.replicaAssignment
	}
	if len(o.configs) > 0 {
		detail.ConfigEntries = make(map[string]*string, len(o.configs))
		for k, v := range o.configs {
			v := v
			detail.ConfigEntries[k] = &v
		}
	}
	err := s.admin.CreateTopic(o.topic, detail, false)
	var te *sarama.TopicError
	if errors.As(err, &te) && errors.Is(te.Err, sarama.ErrTopicAlreadyExists) && o.ifNotExists {
		return nil
	}
	if errors.As(err, &te) && errors.Is(te.Err, sarama.ErrTopicAlreadyExists) {
		// Kafka's broker words it so; print that whatever the broker sent.
		return tool.Errorf("Topic '%s' already exists.", o.topic)
	}
	if err != nil {
		return adminError(err)
	}
	fmt.Fprintf(out, "Created topic %s.\n", o.topic)
	return nil
}

func (s *adminTopicService) alterTopic(o *topicOpts, _ io.Writer) error {
	topics, err := existingTopics(s.topics, o)
	if err != nil {
		return err
	}
	for _, t := range topics {
		var assignment [][]int32
		if o.replicaAssignment != nil {
			parts, err := s.client.Partitions(t)
			if err != nil {
				return err
			}
			for p := int32(len(parts)); p < int32(len(o.replicaAssignment)); p++ {
				assignment = append(assignment, o.replicaAssignment[p])
			}
		}
		if err := s.admin.CreatePartitions(t, o.partitions, assignment, false); err != nil {
			return adminError(err)
		}
	}
	return nil
}

func (s *adminTopicService) deleteTopics(o *topicOpts, _ io.Writer) error {
	topics, err := existingTopics(s.topics, o)
	if err != nil {
		return err
	}
	for _, t := range topics {
		if err := s.admin.DeleteTopic(t); err != nil {
			return adminError(err)
		}
	}
	return nil
}

// adminError prefers the broker's error message, as Kafka's tool prints the
// exception message the broker sent.
func adminError(err error) error {
	var te *sarama.TopicError
	if errors.As(err, &te) && te.ErrMsg != nil && *te.ErrMsg != "" {
		return tool.Error(*te.ErrMsg)
	}
	var pe *sarama.TopicPartitionError
	if errors.As(err, &pe) && pe.ErrMsg != nil && *pe.ErrMsg != "" {
		return tool.Error(*pe.ErrMsg)
	}
	return err
}
