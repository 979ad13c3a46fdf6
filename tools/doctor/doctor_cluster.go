package doctor

// Cluster checks of samsa doctor. The cluster is read either from
// ZooKeeper (registrations, assignments and partition states, as the
// controller sees them) or from a broker's metadata (Admin API); both give
// a clusterView that the same checks run on.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"samsa/kafka"
	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

// clusterView is what the cluster checks need.
type clusterView struct {
	brokers    map[int32][]string // id → host:port of its endpoints
	partitions []partitionView    // sorted by topic, partition
}

type partitionView struct {
	topic     string
	partition int32
	replicas  []int32 // first = preferred leader
	isr       []int32
	leader    int32 // -1: none
}

func (p partitionView) name() string { return p.topic + "-" + strconv.Itoa(int(p.partition)) }

const offsetsTopic = "__consumer_offsets"

func clusterViewZK(connect string, timeout time.Duration, env tool.Env) (*clusterView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	zk, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect, SessionTimeout: tool.ZKTimeout,
		ConnectionTimeout: timeout, Logger: tool.Logger(env, "doctor")})
	if err != nil {
		return nil, err
	}
	defer zk.Close()
	v := &clusterView{brokers: map[int32][]string{}}
	brokers, err := zk.GetAllBrokers()
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return nil, err
	}
	for id, b := range brokers {
		for _, ep := range b.Registration.Endpoints {
			v.brokers[id] = append(v.brokers[id], net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))))
		}
	}
	topics, err := zk.GetAllTopics()
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return nil, err
	}
	assignments, err := zk.GetTopicAssignments(topics)
	if err != nil {
		return nil, err
	}
	var tps []kafka.TopicPartition
	for t, a := range assignments {
		for p := range a.Assignment.Partitions {
			tps = append(tps, kafka.TopicPartition{Topic: t, Partition: p})
		}
	}
	states, err := zk.GetPartitionStates(tps)
	if err != nil {
		return nil, err
	}
	for _, tp := range tps {
		pv := partitionView{topic: tp.Topic, partition: tp.Partition, leader: -1,
			replicas: assignments[tp.Topic].Assignment.Partitions[tp.Partition]}
		if st, ok := states[tp]; ok {
			pv.leader, pv.isr = st.State.Leader, st.State.ISR
		}
		v.partitions = append(v.partitions, pv)
	}
	v.sort()
	return v, nil
}

func clusterViewAdmin(bootstrap, commandConfig string, timeout time.Duration) (*clusterView, error) {
	cfg, err := tool.NewSaramaConfig("samsa-doctor", commandConfig, nil)
	if err != nil {
		return nil, err
	}
	cfg.Net.DialTimeout = timeout
	cfg.Metadata.Retry.Max = 1
	admin, err := sarama.NewClusterAdmin(tool.SplitList(bootstrap), cfg)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	brokers, _, err := admin.DescribeCluster()
	if err != nil {
		return nil, err
	}
	v := &clusterView{brokers: map[int32][]string{}}
	for _, b := range brokers {
		v.brokers[b.ID()] = []string{b.Addr()}
	}
	topics, err := admin.ListTopics()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	sort.Strings(names)
	if len(names) > 0 {
		md, err := admin.DescribeTopics(names)
		if err != nil {
			return nil, err
		}
		for _, t := range md {
			if t.Err != sarama.ErrNoError {
				return nil, fmt.Errorf("topic %s: %w", t.Name, t.Err)
			}
			for _, p := range t.Partitions {
				v.partitions = append(v.partitions, partitionView{topic: t.Name, partition: p.ID,
					replicas: p.Replicas, isr: p.Isr, leader: p.Leader})
			}
		}
	}
	v.sort()
	return v, nil
}

func (v *clusterView) sort() {
	sort.Slice(v.partitions, func(i, j int) bool {
		a, b := v.partitions[i], v.partitions[j]
		if a.topic != b.topic {
			return a.topic < b.topic
		}
		return a.partition < b.partition
	})
}

func contains(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func idList(ids []int32) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += strconv.Itoa(int(id))
	}
	return s
}

// checkCluster runs the cluster checks on v.
func checkCluster(r *doctorReport, section string, v *clusterView, timeout time.Duration) {
	// Brokers that do not accept connections.
	ids := make([]int32, 0, len(v.brokers))
	for id := range v.brokers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var down []string
	for _, id := range ids {
		for _, addr := range v.brokers[id] {
			c, err := net.DialTimeout("tcp", addr, timeout)
			if err != nil {
				down = append(down, fmt.Sprintf("broker %d at %s: %v", id, addr, err))
				continue
			}
			c.Close()
		}
	}
	if len(down) > 0 {
		r.add(section, finding{sev: sevFail, summary: fmt.Sprintf("%d broker endpoint(s) registered but not accepting connections", len(down)), details: down,
			fix: "start the broker or fix its advertised.listeners (the address must be reachable from clients and other brokers); a hung broker whose ZooKeeper session is still alive must be restarted"})
	} else {
		r.ok(section, "%d broker(s) registered, all accept connections: %s", len(ids), idList(ids))
	}

	var offline, urp, unbalanced []string
	var offsetsRF, offsetsISR []string
	offsetsSeen := false
	for _, p := range v.partitions {
		desc := fmt.Sprintf("%s leader %d replicas [%s] isr [%s]", p.name(), p.leader, idList(p.replicas), idList(p.isr))
		_, leaderAlive := v.brokers[p.leader]
		switch {
		case p.leader < 0 || !leaderAlive:
			offline = append(offline, desc)
		case len(p.isr) < len(p.replicas):
			urp = append(urp, desc)
		}
		if len(p.replicas) > 0 && p.leader >= 0 && p.leader != p.replicas[0] {
			if _, alive := v.brokers[p.replicas[0]]; alive && contains(p.isr, p.replicas[0]) {
				unbalanced = append(unbalanced, desc)
			}
		}
		if p.topic == offsetsTopic {
			offsetsSeen = true
			if len(p.replicas) < 3 {
				offsetsRF = append(offsetsRF, desc)
			}
			if len(p.isr) == 1 {
				offsetsISR = append(offsetsISR, desc)
			}
		}
	}
	if len(offline) > 0 {
		r.add(section, finding{sev: sevFail, summary: fmt.Sprintf("%d partition(s) offline (no live leader): produce and fetch fail", len(offline)), details: offline,
			fix: "start the brokers holding their replicas; as a last resort, with data loss, set unclean.leader.election.enable=true on the topic (kafka-configs.sh)"})
	} else {
		r.ok(section, "no offline partitions (%d partitions)", len(v.partitions))
	}
	if len(urp) > 0 {
		r.add(section, finding{sev: sevWarn, summary: fmt.Sprintf("%d partition(s) under-replicated (ISR smaller than the replica list)", len(urp)), details: urp,
			fix: "bring the missing replicas' brokers back; if they run, look in their server.log for replica fetcher errors and check disk and network"})
	} else {
		r.ok(section, "no under-replicated partitions")
	}
	if len(unbalanced) > 0 {
		r.add(section, finding{sev: sevWarn, summary: fmt.Sprintf("%d partition(s) not led by their preferred replica (first in the list): load is unbalanced", len(unbalanced)), details: unbalanced,
			fix: "keep auto.leader.rebalance.enable=true and wait leader.imbalance.check.interval.seconds, or run bin/kafka-leader-election.sh --bootstrap-server <broker> --election-type preferred --all-topic-partitions"})
	} else {
		r.ok(section, "every partition is led by its preferred replica")
	}
	switch {
	case !offsetsSeen:
		r.ok(section, "%s does not exist yet (created by the first consumer group)", offsetsTopic)
	case len(offsetsRF) > 0 || len(offsetsISR) > 0:
		details := append(append([]string{}, offsetsRF...), offsetsISR...)
		sort.Strings(details)
		details = dedupe(details)
		what := fmt.Sprintf("%d partition(s) with a replication factor below 3", len(offsetsRF))
		if len(offsetsISR) > 0 {
			what += fmt.Sprintf(", %d with an ISR of one", len(offsetsISR))
		}
		r.add(section, finding{sev: sevWarn, summary: fmt.Sprintf("%s: %s; losing one broker loses consumer group offsets", offsetsTopic, what), details: details,
			fix: "raise its replication factor to 3 with bin/kafka-reassign-partitions.sh (--generate, edit the replica lists, --execute) and set offsets.topic.replication.factor=3; for an ISR of one, bring the other replicas back"})
	default:
		r.ok(section, "%s is replicated 3 or more times with a full ISR", offsetsTopic)
	}
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
