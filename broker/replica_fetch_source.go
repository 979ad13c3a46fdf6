package broker

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/peer"
	"samsa/broker/replica"
	"samsa/broker/storage"
)

// fetcherConfig returns the follower fetchers' settings (replica.fetch.*).
func (b *Broker) fetcherConfig() replica.FetcherConfig {
	b.fetchSrc = &peerFetchSource{b: b, clients: map[int32]*peer.Client{}}
	return replica.FetcherConfig{
		Source:            b.fetchSrc,
		MaxWaitMs:         b.cfg.ReplicaFetchWaitMaxMs,
		MinBytes:          b.cfg.ReplicaFetchMinBytes,
		MaxBytes:          b.cfg.ReplicaFetchResponseMaxBytes,
		PartitionMaxBytes: b.cfg.ReplicaFetchMaxBytes,
		BackoffMs:         b.cfg.ReplicaFetchBackoffMs,
	}
}

// peerFetchSource implements replica.FetchSource with Fetch and
// OffsetForLeaderEpoch requests over broker/peer. Each fetcher goroutine
// uses its own leader's client, so requests to one leader never queue
// behind another's long poll.
type peerFetchSource struct {
	b  *Broker
	mu sync.Mutex
	// clients by leader id; guarded by mu.
	clients map[int32]*peer.Client
	closed  bool // guarded by mu
}

func (s *peerFetchSource) client(leader replica.LeaderEndpoint) (*peer.Client, error) {
	addr := ""
	if leader.Host != "" {
		addr = net.JoinHostPort(leader.Host, strconv.Itoa(int(leader.Port)))
	} else if a, ok := s.b.interBrokerAddr(leader.ID); ok {
		addr = a
	} else {
		return nil, fmt.Errorf("broker: no address known for leader %d", leader.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("broker: fetch source closed")
	}
	if c, ok := s.clients[leader.ID]; ok && c.Addr() == addr {
		return c, nil
	} else if ok {
		c.Close()
	}
	c := peer.New(addr, "replica-fetcher-"+itoa(s.b.ID()), s.b.peerOptions()...)
	s.clients[leader.ID] = c
	return c, nil
}

func (s *peerFetchSource) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, c := range s.clients {
		c.Close()
	}
	s.clients = nil
}

// fetchError maps a Kafka error code to what the fetcher tests for.
func fetchError(code int16) error {
	switch code {
	case 0:
		return nil
	case kerr.OffsetOutOfRange.Code:
		return storage.ErrOffsetOutOfRange
	}
	return kerr.ErrorForCode(code)
}

// Fetch implements replica.FetchSource.
func (s *peerFetchSource) Fetch(ctx context.Context, leader replica.LeaderEndpoint, f replica.FollowerFetch) (map[replica.TopicPartition]replica.FollowerFetchResult, error) {
	c, err := s.client(leader)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = f.ReplicaID
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = f.MaxWaitMs, f.MinBytes, f.MaxBytes
	req.SessionEpoch = -1
	idx := map[string]int{}
	for _, p := range f.Partitions {
		i, ok := idx[p.Topic]
		if !ok {
			t := kmsg.NewFetchRequestTopic()
			t.Topic = p.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			idx[p.Topic] = i
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch = p.Partition, p.FetchOffset, p.CurrentLeaderEpoch
		rp.LogStartOffset, rp.PartitionMaxBytes = p.LogStartOffset, p.MaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	kr, err := c.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, ok := kr.(*kmsg.FetchResponse)
	if !ok {
		return nil, fmt.Errorf("broker: fetch answered with %T", kr)
	}
	if resp.ErrorCode != 0 {
		return nil, kerr.ErrorForCode(resp.ErrorCode)
	}
	out := map[replica.TopicPartition]replica.FollowerFetchResult{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[replica.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = replica.FollowerFetchResult{
				Err: fetchError(p.ErrorCode), HighWatermark: p.HighWatermark,
				LogStartOffset: p.LogStartOffset, Records: p.RecordBatches,
			}
		}
	}
	return out, nil
}

// EndOffsetsForEpoch implements replica.FetchSource.
func (s *peerFetchSource) EndOffsetsForEpoch(ctx context.Context, leader replica.LeaderEndpoint, q map[replica.TopicPartition]replica.EpochQuery) (map[replica.TopicPartition]replica.EpochEndOffset, error) {
	c, err := s.client(leader)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = s.b.ID()
	idx := map[string]int{}
	for tp, e := range q {
		i, ok := idx[tp.Topic]
		if !ok {
			t := kmsg.NewOffsetForLeaderEpochRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			idx[tp.Topic] = i
		}
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = tp.Partition, e.CurrentLeaderEpoch, e.LeaderEpoch
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	kr, err := c.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, ok := kr.(*kmsg.OffsetForLeaderEpochResponse)
	if !ok {
		return nil, fmt.Errorf("broker: OffsetForLeaderEpoch answered with %T", kr)
	}
	out := map[replica.TopicPartition]replica.EpochEndOffset{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[replica.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = replica.EpochEndOffset{
				Err: fetchError(p.ErrorCode), LeaderEpoch: p.LeaderEpoch, EndOffset: p.EndOffset,
			}
		}
	}
	return out, nil
}

// LogRange implements replica.FetchSource with two ListOffsets requests
// (earliest, latest) sent as replica s.b.ID().
func (s *peerFetchSource) LogRange(ctx context.Context, leader replica.LeaderEndpoint, tp replica.TopicPartition) (int64, int64, error) {
	c, err := s.client(leader)
	if err != nil {
		return 0, 0, err
	}
	var out [2]int64
	for i, ts := range []int64{-2, -1} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = s.b.ID()
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = tp.Topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch, rp.MaxNumOffsets = tp.Partition, ts, -1, 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kr, err := c.Request(ctx, req)
		if err != nil {
			return 0, 0, err
		}
		resp, ok := kr.(*kmsg.ListOffsetsResponse)
		if !ok || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, 0, fmt.Errorf("broker: malformed ListOffsets answer from leader %d", leader.ID)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			return 0, 0, kerr.ErrorForCode(p.ErrorCode)
		}
		out[i] = p.Offset
		if resp.Version == 0 && len(p.OldStyleOffsets) > 0 {
			out[i] = p.OldStyleOffsets[0]
		}
	}
	return out[0], out[1], nil
}

func itoa(v int32) string { return strconv.FormatInt(int64(v), 10) }
