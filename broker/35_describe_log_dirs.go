package broker

// DescribeLogDirs: v0-2
//
// Behaviour:
//   - Lists each of this broker's log dirs with the hosted partitions in
//     it (all of them when topics is null, else the named ones): size on
//     disk, and offset lag max(0, HW - log end) as Kafka 2.8 reports for
//     current (non-future) replicas.
//   - A dir the storage manager took offline after a disk error answers
//     KAFKA_STORAGE_ERROR with no topics (Kafka's describeLogDirs); the
//     others answer NONE. There are no future replicas
//     (AlterReplicaLogDirs is not offered).
//   - Authorization: Describe on the cluster; without it the answer lists no
//     log dir and carries no error, as Kafka 2.8.
//
// Version notes:
//   - v1: throttle semantics only. v2: flexible.

import (
	"path/filepath"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/storage"
	"samsa/kafka"
)

func (b *Broker) handleDescribeLogDirs(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !b.authorizedCluster(r, acl.OpDescribe) {
		return resp, nil // Kafka 2.8: an empty answer, no error
	}
	want := func(topic string, p int32) bool { return true }
	if req.Topics != nil {
		set := map[kafka.TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				set[kafka.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
		want = func(topic string, p int32) bool { return set[kafka.TopicPartition{Topic: topic, Partition: p}] }
	}
	byDir := map[string][]*storage.Log{}
	for _, l := range b.logs.Logs() {
		tp := l.TopicPartition()
		if !want(tp.Topic, tp.Partition) {
			continue
		}
		root, _ := filepath.Abs(filepath.Dir(l.Dir()))
		byDir[root] = append(byDir[root], l)
	}
	offline := map[string]bool{}
	for d := range b.logs.OfflineDirs() {
		abs, _ := filepath.Abs(d)
		offline[abs] = true
	}
	for _, d := range b.logs.Dirs() {
		abs, _ := filepath.Abs(d)
		rd := kmsg.NewDescribeLogDirsResponseDir()
		rd.Dir = abs
		if offline[abs] {
			rd.ErrorCode = kerr.KafkaStorageError.Code
			resp.Dirs = append(resp.Dirs, rd)
			continue
		}
		logs := byDir[abs]
		sort.Slice(logs, func(i, j int) bool {
			a, c := logs[i].TopicPartition(), logs[j].TopicPartition()
			return a.Topic < c.Topic || a.Topic == c.Topic && a.Partition < c.Partition
		})
		for _, l := range logs {
			tp := l.TopicPartition()
			if n := len(rd.Topics); n == 0 || rd.Topics[n-1].Topic != tp.Topic {
				rt := kmsg.NewDescribeLogDirsResponseDirTopic()
				rt.Topic = tp.Topic
				rd.Topics = append(rd.Topics, rt)
			}
			rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			rp.Partition = tp.Partition
			rp.Size = l.Size()
			rp.OffsetLag = max(0, l.HighWatermark()-l.LogEndOffset())
			rt := &rd.Topics[len(rd.Topics)-1]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Dirs = append(resp.Dirs, rd)
	}
	return resp, nil
}
