package reassign

// The two backends of kafka-reassign-partitions: --bootstrap-server (the
// KIP-455 Admin APIs through kafkaAdmin) and --zookeeper (the znodes
// /admin/reassign_partitions, /brokers/topics and /config, as Kafka 2.8's
// deprecated ZooKeeper path).

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/assign"
	"samsa/broker/wire"
	"samsa/kafka"
	"samsa/tools/internal/tool"
	"samsa/tools/topics"
	"samsa/zkutil"
)

// ongoingReassignment is one partition being reassigned.
type ongoingReassignment struct {
	replicas, adding, removing []int32
}

type reassignBackend interface {
	close()
	// liveBrokers returns the registered brokers (ids, racks).
	liveBrokers(disableRack bool) ([]assign.Broker, error)
	// assignments returns the current replicas of every partition of topics.
	assignments(topics []string) (map[kafka.TopicPartition][]int32, error)
	// ongoing returns the reassignments in progress among tps.
	ongoing(tps []kafka.TopicPartition) (map[kafka.TopicPartition]ongoingReassignment, error)
	// alter starts (target non-nil) or cancels (nil) reassignments; the
	// map holds per-partition failures. logEnd asks Samsa to start the new
	// replicas at the leader's log end.
	alter(targets map[kafka.TopicPartition][]int32, logEnd bool) (map[kafka.TopicPartition]error, error)
	// alterConfig sets and deletes keys of a topic or broker entity.
	alterConfig(entityType, name string, set map[string]string, del []string) error
}

// adminReassignBackend is the --bootstrap-server backend.
type adminReassignBackend struct{ a *kafkaAdmin }

func (b adminReassignBackend) close() { b.a.close() }

func (b adminReassignBackend) liveBrokers(disableRack bool) ([]assign.Broker, error) {
	if err := b.a.refresh([]string{}); err != nil {
		return nil, err
	}
	var out []assign.Broker
	for _, br := range b.a.meta.Brokers {
		m := assign.Broker{ID: br.NodeID}
		if !disableRack && br.Rack != nil {
			m.Rack = *br.Rack
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(x, y assign.Broker) int { return int(x.ID - y.ID) })
	return out, nil
}

func (b adminReassignBackend) assignments(topics []string) (map[kafka.TopicPartition][]int32, error) {
	if err := b.a.refresh(topics); err != nil {
		return nil, err
	}
	out := map[kafka.TopicPartition][]int32{}
	for _, t := range b.a.meta.Topics {
		if t.ErrorCode == kerr.UnknownTopicOrPartition.Code {
			continue
		}
		if t.ErrorCode != 0 {
			return nil, adminCodeError(t.ErrorCode, nil)
		}
		for _, p := range t.Partitions {
			out[kafka.TopicPartition{Topic: *t.Topic, Partition: p.Partition}] = slices.Clone(p.Replicas)
		}
	}
	return out, nil
}

func (b adminReassignBackend) ongoing(tps []kafka.TopicPartition) (map[kafka.TopicPartition]ongoingReassignment, error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = int32(adminRequestTimeout.Milliseconds())
	if tps != nil {
		req.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{}
		byTopic(tps, func(topic string) {
			rt := kmsg.NewListPartitionReassignmentsRequestTopic()
			rt.Topic = topic
			req.Topics = append(req.Topics, rt)
		}, func(i int, tp kafka.TopicPartition) {
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
		})
	}
	resp, err := b.a.toController(req, func(r kmsg.Response) int16 { return r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode })
	if err != nil {
		return nil, err
	}
	lr := resp.(*kmsg.ListPartitionReassignmentsResponse)
	if lr.ErrorCode != 0 {
		return nil, adminCodeError(lr.ErrorCode, lr.ErrorMessage)
	}
	out := map[kafka.TopicPartition]ongoingReassignment{}
	for _, t := range lr.Topics {
		for _, p := range t.Partitions {
			out[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = ongoingReassignment{p.Replicas, p.AddingReplicas, p.RemovingReplicas}
		}
	}
	return out, nil
}

func (b adminReassignBackend) alter(targets map[kafka.TopicPartition][]int32, logEnd bool) (map[kafka.TopicPartition]error, error) {
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = int32(adminRequestTimeout.Milliseconds())
	byTopic(sortedTPs(targets), func(topic string) {
		rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
		rt.Topic = topic
		req.Topics = append(req.Topics, rt)
	}, func(i int, tp kafka.TopicPartition) {
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Partition, rp.Replicas = tp.Partition, targets[tp]
		if logEnd && rp.Replicas != nil {
			rp.UnknownTags.Set(wire.LogEndReassignmentTag, []byte{1})
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	})
	resp, err := b.a.toController(req, func(r kmsg.Response) int16 { return r.(*kmsg.AlterPartitionAssignmentsResponse).ErrorCode })
	if err != nil {
		return nil, err
	}
	ar := resp.(*kmsg.AlterPartitionAssignmentsResponse)
	if ar.ErrorCode != 0 {
		return nil, adminCodeError(ar.ErrorCode, ar.ErrorMessage)
	}
	out := map[kafka.TopicPartition]error{}
	for _, t := range ar.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				out[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = adminCodeError(p.ErrorCode, p.ErrorMessage)
			}
		}
	}
	return out, nil
}

func (b adminReassignBackend) alterConfig(entityType, name string, set map[string]string, del []string) error {
	typ := kmsg.ConfigResourceTypeTopic
	if entityType == zkutil.ConfigTypeBroker {
		typ = kmsg.ConfigResourceTypeBroker
	}
	return b.a.alterConfigs(typ, name, set, del)
}

// byTopic groups tps by topic in first-seen order, as the admin requests
// list them: newTopic is called once per topic (to append the request's
// topic entry), then add for each partition with the index of its topic.
func byTopic(tps []kafka.TopicPartition, newTopic func(topic string), add func(i int, tp kafka.TopicPartition)) {
	idx := map[string]int{}
	for _, tp := range tps {
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(idx)
			idx[tp.Topic] = i
			newTopic(tp.Topic)
		}
		add(i, tp)
	}
}

// zkReassignBackend is the --zookeeper backend.
type zkReassignBackend struct{ zk *topics.ZKTopicService }

func (b zkReassignBackend) close() { b.zk.Close() }

func (b zkReassignBackend) liveBrokers(disableRack bool) ([]assign.Broker, error) {
	return b.zk.BrokerMetas(disableRack)
}

func (b zkReassignBackend) assignments(topics []string) (map[kafka.TopicPartition][]int32, error) {
	as, err := b.zk.Client().GetTopicAssignments(topics)
	if err != nil {
		return nil, err
	}
	out := map[kafka.TopicPartition][]int32{}
	for t, va := range as {
		for p, r := range va.Assignment.Partitions {
			out[kafka.TopicPartition{Topic: t, Partition: p}] = slices.Clone(r)
		}
	}
	return out, nil
}

func (b zkReassignBackend) ongoing(tps []kafka.TopicPartition) (map[kafka.TopicPartition]ongoingReassignment, error) {
	pending, err := b.zk.Client().GetPartitionReassignment()
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return nil, err
	}
	topics := map[string]bool{}
	for _, tp := range tps {
		topics[tp.Topic] = true
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	as, err := b.zk.Client().GetTopicAssignments(names)
	if err != nil {
		return nil, err
	}
	out := map[kafka.TopicPartition]ongoingReassignment{}
	for _, tp := range tps {
		va, ok := as[tp.Topic]
		if !ok {
			continue
		}
		a := va.Assignment
		_, queued := pending[tp]
		if queued || len(a.AddingReplicas[tp.Partition]) > 0 || len(a.RemovingReplicas[tp.Partition]) > 0 {
			out[tp] = ongoingReassignment{a.Partitions[tp.Partition], a.AddingReplicas[tp.Partition], a.RemovingReplicas[tp.Partition]}
		}
	}
	return out, nil
}

func (b zkReassignBackend) alter(targets map[kafka.TopicPartition][]int32, logEnd bool) (map[kafka.TopicPartition]error, error) {
	r := map[kafka.TopicPartition][]int32{}
	for tp, replicas := range targets {
		if replicas == nil {
			return nil, tool.Error("Cancelling a reassignment is not supported with --zookeeper; use --bootstrap-server")
		}
		r[tp] = replicas
	}
	if exists, err := b.zk.Client().ReassignmentInProgress(); err != nil {
		return nil, err
	} else if exists {
		return nil, tool.Error("There is an existing assignment running.")
	}
	if err := b.writeLogEndEntries(targets, logEnd); err != nil {
		return nil, err
	}
	err := b.zk.Client().CreatePartitionReassignment(r)
	if errors.Is(err, zkutil.ErrNodeExists) {
		return nil, tool.Error("There is an existing assignment running.")
	}
	return nil, err
}

// writeLogEndEntries records (logEnd) or removes the log-end entries of the
// targets' partitions, as the broker does for API reassignments.
func (b zkReassignBackend) writeLogEndEntries(targets map[kafka.TopicPartition][]int32, logEnd bool) error {
	byTopic := map[string][]kafka.TopicPartition{}
	for tp := range targets {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp)
	}
	for _, topic := range tool.SortedKeys(byTopic) {
		current, err := b.assignments([]string{topic})
		if err != nil {
			return err
		}
		cfg, err := b.zk.Client().GetEntityConfig(zkutil.ConfigTypeLogEndReplicas, topic)
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		var keep []string
		moving := map[int32]bool{}
		for _, tp := range byTopic[topic] {
			moving[tp.Partition] = true
		}
		for _, e := range strings.Split(cfg["replicas"], ",") {
			p, _, ok := strings.Cut(e, ":")
			if n, err := strconv.Atoi(p); ok && err == nil && !moving[int32(n)] {
				keep = append(keep, e)
			}
		}
		if logEnd {
			for _, tp := range byTopic[topic] {
				for _, r := range targets[tp] {
					if !slices.Contains(current[tp], r) {
						keep = append(keep, fmt.Sprintf("%d:%d", tp.Partition, r))
					}
				}
			}
		}
		if len(keep) == 0 && len(cfg) == 0 {
			continue
		}
		if err := b.zk.Client().SetEntityConfig(zkutil.ConfigTypeLogEndReplicas, topic, map[string]string{"replicas": strings.Join(keep, ",")}); err != nil {
			return err
		}
	}
	return nil
}

func (b zkReassignBackend) alterConfig(entityType, name string, set map[string]string, del []string) error {
	cfg, err := b.zk.Client().GetEntityConfig(entityType, name)
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return err
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	changed := false
	for k, v := range set {
		if cfg[k] != v {
			cfg[k], changed = v, true
		}
	}
	for _, k := range del {
		if _, ok := cfg[k]; ok {
			delete(cfg, k)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	// SetEntityConfig also writes the /config/changes notification.
	if err := b.zk.Client().SetEntityConfig(entityType, name, cfg); err != nil {
		return fmt.Errorf("tools: write config of %s %s: %w", entityType, name, err)
	}
	return nil
}
