package remote

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/fetchsession"
	"samsa/broker/replica"
	"samsa/broker/storage"
	"samsa/kafka"
	"samsa/peer"
)

// Config is what a FetchSource needs from its broker.
type Config struct {
	// BrokerID is this broker's id: the replica id of its OffsetForLeaderEpoch and
	// ListOffsets requests, and part of its client ids.
	BrokerID int32
	// PeerOptions returns the options of every new client (logger, dialer, the
	// inter-broker listener's TLS and SASL); called once per client.
	PeerOptions func() []peer.Option
	// RequestTimeout bounds every request (replica.socket.timeout.ms).
	RequestTimeout time.Duration
	// Addr returns the inter-broker address of broker id from the broker's
	// metadata, for a leader endpoint without a host.
	Addr func(id int32) (string, bool)
}

// FetchSource implements replica.FetchSource with Fetch and
// OffsetForLeaderEpoch requests over peer. Each fetcher goroutine
// (num.replica.fetchers per leader) fetches over a client of its own, kept
// in its scratch, so its long polls never queue behind another fetcher's;
// the short OffsetForLeaderEpoch and ListOffsets calls share one client
// per leader.
type FetchSource struct {
	cfg Config
	mu  sync.Mutex
	// clients by leader id; guarded by mu.
	clients map[int32]*peer.Client
	// fetchClients are the fetchers' own clients; guarded by mu.
	fetchClients map[*peer.Client]struct{}
	closed       bool // guarded by mu
}

// NewFetchSource returns a FetchSource with no connections yet.
func NewFetchSource(cfg Config) *FetchSource {
	return &FetchSource{cfg: cfg, clients: map[int32]*peer.Client{}}
}

func (s *FetchSource) client(leader replica.LeaderEndpoint) (*peer.Client, error) {
	addr, err := s.addr(leader)
	if err != nil {
		return nil, err
	}
	return s.clientAt(leader.ID, addr)
}

// addr returns leader's inter-broker address.
func (s *FetchSource) addr(leader replica.LeaderEndpoint) (string, error) {
	if leader.Host != "" {
		return net.JoinHostPort(leader.Host, strconv.Itoa(int(leader.Port))), nil
	}
	if a, ok := s.cfg.Addr(leader.ID); ok {
		return a, nil
	}
	return "", fmt.Errorf("remote: no address known for leader %d", leader.ID)
}

// clientAt returns the client of leader id at addr, replacing one that
// connects elsewhere.
func (s *FetchSource) clientAt(id int32, addr string) (*peer.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("remote: fetch source closed")
	}
	if c, ok := s.clients[id]; ok && c.Addr() == addr {
		return c, nil
	} else if ok {
		c.Close()
	}
	c := s.newClient(addr)
	s.clients[id] = c
	return c, nil
}

// fetchClient returns the fetcher's own client (in sc) for the leader at
// addr, replacing one that connects elsewhere.
func (s *FetchSource) fetchClient(sc *fetchScratch, addr string) (*peer.Client, error) {
	if sc.client != nil && sc.client.Addr() == addr {
		return sc.client, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("remote: fetch source closed")
	}
	if sc.client != nil {
		sc.client.Close()
		delete(s.fetchClients, sc.client)
	}
	sc.client = s.newClient(addr)
	if s.fetchClients == nil {
		s.fetchClients = map[*peer.Client]struct{}{}
	}
	s.fetchClients[sc.client] = struct{}{}
	return sc.client, nil
}

// newClient returns a client of the leader at addr. replica.socket.timeout.ms
// bounds every request, as Kafka's ReplicaFetcherBlockingSend does: a leader
// that stops answering without closing the connection fails the fetch
// instead of hanging it.
func (s *FetchSource) newClient(addr string) *peer.Client {
	opts := append(s.cfg.PeerOptions(), peer.WithRequestTimeout(s.cfg.RequestTimeout))
	return peer.New(addr, "replica-fetcher-"+strconv.FormatInt(int64(s.cfg.BrokerID), 10), opts...)
}

// Close closes every client; later calls fail.
func (s *FetchSource) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, c := range s.clients {
		c.Close()
	}
	for c := range s.fetchClients {
		c.Close()
	}
	s.clients, s.fetchClients = nil, nil
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

// fetchScratch is one fetcher's reusable Fetch state, kept in its
// replica.FollowerFetchResponse.Scratch: the kmsg request and response
// (kmsg's decoder reuses the response's slices), the response frame the
// record bytes alias, and the leader's last resolved address.
type fetchScratch struct {
	req   *kmsg.FetchRequest
	resp  *kmsg.FetchResponse
	frame []byte // the last answer's frame (its length), reused
	// smallAnswers counts the answers in a row that used under a quarter
	// of a frame above frameKeepBytes (keepFrame).
	smallAnswers int
	topics       map[string]int // topic -> index in req.Topics, while building
	ep           replica.LeaderEndpoint
	addr         string       // ep's address
	client       *peer.Client // this fetcher's own connection to the leader
	// session is this fetcher's KIP-227 session with the leader: each
	// request names only the partitions whose fetch position changed.
	session fetchsession.Handler
	entries []fetchsession.Entry // the round's partitions, reused
	forgot  map[string]int       // topic -> index in req.ForgottenTopics, while building
}

// A fetcher's frame above frameKeepBytes is let go only after
// frameShrinkAnswers answers in a row used under a quarter of it: about
// 30 s of idle long polls (replica.fetch.wait.max.ms 500), or a long run of
// small answers. Under load the answers' sizes swing between a few KiB and
// replica.fetch.response.max.bytes from round to round (at 12,000
// partitions, 64 KiB batches of whichever partitions had data); letting
// the frame go on the first small answer made the next large one grow a
// new buffer chunk by chunk (wire.ReadFrame), allocating and copying about
// twice its size, and the GC cycles those allocations caused were the
// largest cost a follower had after its writes (issue 18 point 3,
// docs/benchmarks.md "Cost per partition").
const (
	frameKeepBytes     = 1 << 20
	frameShrinkAnswers = 64
)

// keepFrame returns the frame to read the next answer into: the last
// one, unless it has been mostly unused for frameShrinkAnswers answers.
func (sc *fetchScratch) keepFrame() []byte {
	if cap(sc.frame) <= frameKeepBytes || len(sc.frame) >= cap(sc.frame)/4 {
		sc.smallAnswers = 0
		return sc.frame
	}
	if sc.smallAnswers++; sc.smallAnswers < frameShrinkAnswers {
		return sc.frame
	}
	sc.smallAnswers = 0
	return nil
}

// Fetch implements replica.FetchSource. The answer's record bytes alias
// the frame kept in resp.Scratch, so nothing is copied between the socket
// and the follower's log append.
func (s *FetchSource) Fetch(ctx context.Context, leader replica.LeaderEndpoint, f replica.FollowerFetch, resp *replica.FollowerFetchResponse) error {
	sc, _ := resp.Scratch.(*fetchScratch)
	if sc == nil {
		sc = &fetchScratch{req: kmsg.NewPtrFetchRequest(), resp: kmsg.NewPtrFetchResponse(), topics: map[string]int{}}
		resp.Scratch = sc
	}
	resp.Partitions = resp.Partitions[:0]
	// Resolve the address once per endpoint, not per fetch (it allocates).
	if sc.addr == "" || sc.ep != leader || leader.Host == "" {
		addr, err := s.addr(leader)
		if err != nil {
			sc.session.HandleError() // f's delta is lost: the next request is full
			return err
		}
		sc.ep, sc.addr = leader, addr
	}
	c, err := s.fetchClient(sc, sc.addr)
	if err != nil {
		sc.session.HandleError()
		return err
	}
	req := sc.buildRequest(f)
	// Fields a lower version does not carry must not keep an earlier
	// answer's values; the topics slice is kept for kmsg to reuse.
	respTopics := sc.resp.Topics
	*sc.resp = kmsg.NewFetchResponse()
	sc.resp.Topics = respTopics
	// The fetcher is done with the previous answer's records.
	sc.frame = sc.keepFrame()
	sc.frame, err = c.RequestInto(ctx, req, sc.resp, sc.frame)
	if err != nil {
		sc.session.HandleError()
		return err
	}
	if !sc.session.HandleResponse(sc.resp.ErrorCode, sc.resp.SessionID) {
		switch sc.resp.ErrorCode {
		case kerr.FetchSessionIDNotFound.Code, kerr.InvalidFetchSessionEpoch.Code, 0:
			// Kafka's ReplicaFetcherThread answers a session error with
			// no partitions and fetches again at once, in full.
			return nil
		}
		return kerr.ErrorForCode(sc.resp.ErrorCode)
	}
	for _, t := range sc.resp.Topics {
		for _, p := range t.Partitions {
			resp.Partitions = append(resp.Partitions, replica.FollowerFetchResult{
				TopicPartition: kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				Err:            fetchError(p.ErrorCode), HighWatermark: p.HighWatermark,
				LogStartOffset: p.LogStartOffset, Records: p.RecordBatches,
			})
		}
	}
	return nil
}

// buildRequest fills sc's request for f: the fetch session (KIP-227)
// picks the partitions to send and to forget, grouped by topic, reusing
// the previous request's slices.
func (sc *fetchScratch) buildRequest(f replica.FollowerFetch) *kmsg.FetchRequest {
	req := sc.req
	topics := req.Topics[:0]
	*req = kmsg.NewFetchRequest()
	req.ReplicaID = f.ReplicaID
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = f.MaxWaitMs, f.MinBytes, f.MaxBytes
	// An incremental request is built from what changed alone (an idle
	// round names nothing and looks at no partition); a full one from all.
	var send []fetchsession.Entry
	var forget []kafka.TopicPartition
	if sc.session.NeedsFull() {
		req.SessionID, req.SessionEpoch, send, forget = sc.session.Build(sc.sessionEntries(f.Partitions))
	} else {
		req.SessionID, req.SessionEpoch, send, forget = sc.session.BuildDelta(sc.sessionEntries(f.Changed), f.Forgotten)
	}
	clear(sc.topics)
	for _, e := range send {
		p := replica.FollowerFetchPartition{TopicPartition: e.TP,
			FetchOffset: e.Req.FetchOffset, CurrentLeaderEpoch: e.Req.CurrentLeaderEpoch,
			LogStartOffset: e.Req.LogStartOffset, MaxBytes: e.Req.MaxBytes}
		i, ok := sc.topics[p.Topic]
		if !ok {
			i = len(topics)
			sc.topics[p.Topic] = i
			if i < cap(topics) {
				topics = topics[:i+1] // reuse the element's partitions slice
			} else {
				topics = append(topics, kmsg.NewFetchRequestTopic())
			}
			parts := topics[i].Partitions[:0]
			topics[i] = kmsg.NewFetchRequestTopic()
			topics[i].Topic, topics[i].Partitions = p.Topic, parts
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch = p.Partition, p.FetchOffset, p.CurrentLeaderEpoch
		rp.LogStartOffset, rp.PartitionMaxBytes = p.LogStartOffset, p.MaxBytes
		topics[i].Partitions = append(topics[i].Partitions, rp)
	}
	req.Topics = topics
	req.ForgottenTopics = sc.forgottenTopics(forget)
	return req
}

// sessionEntries converts ps into sc.entries (reused).
func (sc *fetchScratch) sessionEntries(ps []replica.FollowerFetchPartition) []fetchsession.Entry {
	sc.entries = sc.entries[:0]
	for _, p := range ps {
		sc.entries = append(sc.entries, fetchsession.Entry{
			TP: p.TopicPartition,
			Req: fetchsession.PartitionRequest{FetchOffset: p.FetchOffset, LogStartOffset: p.LogStartOffset,
				MaxBytes: p.MaxBytes, CurrentLeaderEpoch: p.CurrentLeaderEpoch, LastFetchedEpoch: -1}})
	}
	return sc.entries
}

// forgottenTopics groups forget by topic into req's forgotten topics,
// reusing the previous request's slice.
func (sc *fetchScratch) forgottenTopics(forget []kafka.TopicPartition) []kmsg.FetchRequestForgottenTopic {
	out := sc.req.ForgottenTopics[:0]
	if len(forget) == 0 {
		return out
	}
	if sc.forgot == nil {
		sc.forgot = map[string]int{}
	}
	clear(sc.forgot)
	for _, tp := range forget {
		i, ok := sc.forgot[tp.Topic]
		if !ok {
			i = len(out)
			sc.forgot[tp.Topic] = i
			ft := kmsg.NewFetchRequestForgottenTopic()
			ft.Topic = tp.Topic
			out = append(out, ft)
		}
		out[i].Partitions = append(out[i].Partitions, tp.Partition)
	}
	return out
}

// EndOffsetsForEpoch implements replica.FetchSource.
func (s *FetchSource) EndOffsetsForEpoch(ctx context.Context, leader replica.LeaderEndpoint, q map[kafka.TopicPartition]replica.EpochQuery) (map[kafka.TopicPartition]replica.EpochEndOffset, error) {
	c, err := s.client(leader)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = s.cfg.BrokerID
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
		return nil, fmt.Errorf("remote: OffsetForLeaderEpoch answered with %T", kr)
	}
	out := map[kafka.TopicPartition]replica.EpochEndOffset{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = replica.EpochEndOffset{
				Err: fetchError(p.ErrorCode), LeaderEpoch: p.LeaderEpoch, EndOffset: p.EndOffset,
			}
		}
	}
	return out, nil
}

// LogRange implements replica.FetchSource with two ListOffsets requests
// (earliest, latest) sent as replica s.cfg.BrokerID.
func (s *FetchSource) LogRange(ctx context.Context, leader replica.LeaderEndpoint, tp kafka.TopicPartition) (int64, int64, error) {
	c, err := s.client(leader)
	if err != nil {
		return 0, 0, err
	}
	var out [2]int64
	for i, ts := range []int64{-2, -1} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = s.cfg.BrokerID
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
			return 0, 0, fmt.Errorf("remote: malformed ListOffsets answer from leader %d", leader.ID)
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
