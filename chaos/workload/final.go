package workload

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/chaos/history"
)

// CreateTopic creates the workload topic: partitions, RF 3,
// min.insync.replicas 2, unclean election as given.
func CreateTopic(ctx context.Context, bootstrap []string, topic string, partitions int32, unclean bool) error {
	cl, err := kgo.NewClient(commonOpts(bootstrap)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	u := fmt.Sprint(unclean)
	mi := "2"
	resp, err := adm.CreateTopic(ctx, partitions, 3, map[string]*string{
		"min.insync.replicas":            &mi,
		"unclean.leader.election.enable": &u,
	}, topic)
	if err != nil {
		return fmt.Errorf("workload: create topic: %w", err)
	}
	return resp.Err
}

// createTopicOnce creates topic, retrying (bounded: 60 s) while the
// cluster cannot yet; an existing topic is success.
func createTopicOnce(ctx context.Context, bootstrap []string, topic string, partitions int32, unclean bool) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 15*time.Second)
		err := CreateTopic(cctx, bootstrap, topic, partitions, unclean)
		ccancel()
		if err == nil || strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("workload: create %s: %w", topic, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// FinalRead reads every partition of topic from its start to the end
// offset it lists first, recording final-read and final-end ops. Bounded
// by d.
func FinalRead(ctx context.Context, bootstrap []string, topic string, h *history.Writer, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	acl, err := kgo.NewClient(commonOpts(bootstrap)...)
	if err != nil {
		return err
	}
	ends, err := kadm.NewClient(acl).ListEndOffsets(ctx, topic)
	acl.Close()
	if err != nil {
		return fmt.Errorf("workload: final read: end offsets: %w", err)
	}
	want := map[int32]int64{}
	from := map[int32]kgo.Offset{}
	var lerr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			lerr = o.Err
		}
		want[o.Partition] = o.Offset
		from[o.Partition] = kgo.NewOffset().AtStart()
	})
	if lerr != nil {
		return fmt.Errorf("workload: final read: end offsets: %w", lerr)
	}
	pending := map[int32]bool{}
	for p, end := range want {
		if end <= 0 {
			h.Add(history.Op{Process: "final", Type: history.OK, F: history.FinalEnd, Partition: p, Offset: end})
		} else {
			pending[p] = true
		}
	}
	if len(pending) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(append(commonOpts(bootstrap), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
		kgo.FetchMaxWait(500*time.Millisecond))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for len(pending) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("workload: final read: %d partitions unfinished: %w", len(pending), ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= want[r.Partition] {
				return
			}
			h.Add(history.Op{Process: "final", Type: history.OK, F: history.FinalRead, Partition: r.Partition,
				Offset: r.Offset, Value: string(r.Value)})
			if r.Offset+1 >= want[r.Partition] && pending[r.Partition] {
				delete(pending, r.Partition)
				h.Add(history.Op{Process: "final", Type: history.OK, F: history.FinalEnd, Partition: r.Partition, Offset: want[r.Partition]})
			}
		})
	}
	return nil
}

// PartitionState is one partition's leader and ISR.
type PartitionState struct {
	Topic     string
	Partition int32
	Leader    int32
	Replicas  []int32
	ISR       []int32
}

// Partitions lists the partitions of topics (all when none) with leader and ISR.
func Partitions(ctx context.Context, bootstrap []string, topics ...string) ([]PartitionState, error) {
	cl, err := kgo.NewClient(commonOpts(bootstrap)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, topics...)
	if err != nil {
		return nil, err
	}
	var out []PartitionState
	for _, t := range md.Topics.Sorted() {
		if t.Err != nil {
			return nil, fmt.Errorf("topic %s: %w", t.Topic, t.Err)
		}
		for _, p := range t.Partitions.Sorted() {
			out = append(out, PartitionState{Topic: t.Topic, Partition: p.Partition, Leader: p.Leader, Replicas: p.Replicas, ISR: p.ISR})
		}
	}
	return out, nil
}
