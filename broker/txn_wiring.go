package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/group"
	"samsa/broker/replica"
	"samsa/broker/txn"
	"samsa/kafka"
	"samsa/peer"
)

// startTxnCoordinator creates the transaction coordinator over the
// __transaction_state partitions this broker leads.
func (b *Broker) startTxnCoordinator() {
	ms := func(v int32) time.Duration { return time.Duration(v) * time.Millisecond }
	cfg := txn.DefaultConfig()
	cfg.NumPartitions = b.cfg.TransactionStateLogNumPartitions
	cfg.MaxTimeout = ms(b.cfg.TransactionMaxTimeoutMs)
	cfg.IDExpiration = ms(b.cfg.TransactionalIDExpirationMs)
	cfg.AbortInterval = ms(b.cfg.TransactionAbortTimedOutTransactionCleanupIntervalMs)
	cfg.RemoveInterval = ms(b.cfg.TransactionRemoveExpiredTransactionCleanupIntervalMs)
	cfg.LoadBufferSize = int(b.cfg.TransactionStateLogLoadBufferSize)
	b.txnMarks = &markerWriter{b: b, clients: map[int32]*peer.Client{}}
	b.txns = txn.NewCoordinator(txn.Options{
		Config:        cfg,
		Log:           txnLog{b: b},
		Markers:       b.txnMarks,
		NewProducerID: func() (int64, error) { return b.producerIDs.next(b) },
		PartitionFor:  group.PartitionFor,
		Now:           b.opts.Now,
		Logger:        b.opts.Logger.WithField("broker", b.ID()),
	})
}

// txnLeadershipChanged tells the coordinator about __transaction_state
// partitions this broker started or stopped leading; the leader epoch is
// the coordinator epoch (Kafka's onLeadershipChange callback).
func (b *Broker) txnLeadershipChanged(states []replica.PartitionState, results map[kafka.TopicPartition]error) {
	if b.txns == nil {
		return
	}
	for _, ps := range states {
		if ps.Topic != transactionStateTopic || results[ps.TopicPartition] != nil {
			continue
		}
		if ps.Leader == b.ID() {
			b.txns.BecomeLeader(ps.Partition, ps.LeaderEpoch)
		} else {
			b.txns.Resign(ps.Partition, ps.LeaderEpoch)
		}
	}
}

// txnStopReplicas drops __transaction_state partitions StopReplica removed.
func (b *Broker) txnStopReplicas(parts []replica.StopPartition, results map[kafka.TopicPartition]error) {
	if b.txns == nil {
		return
	}
	for _, sp := range parts {
		if sp.Topic == transactionStateTopic && results[sp.TopicPartition] == nil {
			b.txns.Resign(sp.Partition, -1)
		}
	}
}

// createTxnStateTopic creates __transaction_state with Kafka's
// TransactionStateManager.transactionTopicConfigs.
func (b *Broker) createTxnStateTopic() error {
	live := int32(len(b.meta.Snapshot().BrokerIDs))
	rf := int32(b.cfg.TransactionStateLogReplicationFactor)
	if live < rf {
		return fmt.Errorf("%w: transaction.state.log.replication.factor %d but %d live brokers",
			errInvalidReplicationFactor, rf, live)
	}
	spec := topicSpec{name: transactionStateTopic, partitions: b.cfg.TransactionStateLogNumPartitions, rf: int16(rf),
		configs: map[string]string{
			"cleanup.policy":                 "compact",
			"compression.type":               "uncompressed",
			"unclean.leader.election.enable": "false",
			"min.insync.replicas":            strconv.Itoa(int(b.cfg.TransactionStateLogMinISR)),
			"segment.bytes":                  strconv.Itoa(int(b.cfg.TransactionStateLogSegmentBytes)),
		}}
	a, err := b.planTopic(spec)
	if err != nil {
		return err
	}
	return b.createTopic(spec, a)
}

// txnLog implements txn.Log over the replica manager.
type txnLog struct{ b *Broker }

func txnTP(p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: transactionStateTopic, Partition: p}
}

// txnErr maps replica errors onto the coordinator's sentinels (Kafka's
// appendTransactionToLog mapping).
func txnErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, replica.ErrUnknownPartition):
		return fmt.Errorf("%w: %w", txn.ErrUnknownPartition, err)
	case errors.Is(err, replica.ErrNotLeader), errors.Is(err, replica.ErrShuttingDown), errors.Is(err, replica.ErrOffline):
		return fmt.Errorf("%w: %w", txn.ErrNotLeader, err)
	case errors.Is(err, replica.ErrNotEnoughReplicas), errors.Is(err, replica.ErrNotEnoughReplicasAfterAppend):
		return fmt.Errorf("%w: %w", txn.ErrNotEnoughReplicas, err)
	case errors.Is(err, replica.ErrTimeout):
		return fmt.Errorf("%w: %w", txn.ErrTimeout, err)
	}
	return err
}

// Append implements txn.Log: acks=all's min.insync.replicas check, then
// the local append; WaitReplicated is the rest of acks=all.
func (l txnLog) Append(p int32, batch []byte) (int64, error) {
	res, err := l.b.replicas.AppendAsLeader(txnTP(p), batch, -1)
	if err != nil {
		return 0, txnErr(err)
	}
	return res.LastOffset + 1, nil
}

// WaitReplicated implements txn.Log.
func (l txnLog) WaitReplicated(ctx context.Context, p int32, next int64, timeout time.Duration) error {
	return txnErr(l.b.replicas.WaitReplicated(ctx, txnTP(p), next, l.b.opts.Now().Add(timeout)))
}

// ReadFrom implements txn.Log.
func (l txnLog) ReadFrom(p int32, offset int64, maxBytes int) (txn.ReadResult, error) {
	lr, err := l.b.replicas.ReadLocal(txnTP(p), offset, maxBytes)
	if err != nil {
		return txn.ReadResult{End: lr.LogEndOffset}, txnErr(err)
	}
	var buf []byte
	for _, g := range lr.Records {
		start := len(buf)
		buf = append(buf, make([]byte, g.Len)...)
		if _, err := g.File.ReadAt(buf[start:], g.Pos); err != nil {
			return txn.ReadResult{}, fmt.Errorf("broker: read %s-%d: %w", transactionStateTopic, p, err)
		}
	}
	return txn.ReadResult{Batches: buf, End: lr.LogEndOffset}, nil
}

// markerWriter implements txn.MarkerWriter: WriteTxnMarkers to each
// partition's leader over the inter-broker listener, one client per
// destination broker (Kafka's TransactionMarkerChannelManager holds one
// NetworkClient with a queue per broker).
type markerWriter struct {
	b  *Broker
	mu sync.Mutex
	// clients is guarded by mu.
	clients map[int32]*peer.Client
	// verify holds the KIP-890 verification clients, one per coordinator
	// broker (txn_verify.go), apart from the marker clients so that a
	// verification never queues behind a marker waiting for replication.
	// Guarded by mu.
	verify map[int32]*peer.Client
}

// client returns the marker client of broker id at addr.
func (w *markerWriter) client(id int32, addr string) *peer.Client {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clientLocked(w.clients, "txn-markers-", id, addr)
}

// verifyClient returns the KIP-890 verification client of broker id at addr.
func (w *markerWriter) verifyClient(id int32, addr string) *peer.Client {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.verify == nil {
		w.verify = map[int32]*peer.Client{}
	}
	return w.clientLocked(w.verify, "txn-verify-", id, addr)
}

// clientLocked returns set's client of broker id, replacing one for an
// old address.
func (w *markerWriter) clientLocked(set map[int32]*peer.Client, prefix string, id int32, addr string) *peer.Client {
	if c := set[id]; c != nil && c.Addr() == addr {
		return c
	} else if c != nil {
		_ = c.Close()
	}
	opts := append(w.b.peerOptions(), peer.WithRequestTimeout(time.Duration(w.b.cfg.RequestTimeoutMs)*time.Millisecond))
	c := peer.New(addr, prefix+itoa(w.b.ID()), opts...)
	set[id] = c
	return c
}

// close closes every marker and verification client; a later use opens
// a new one.
func (w *markerWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, set := range []map[int32]*peer.Client{w.clients, w.verify} {
		for id, c := range set {
			_ = c.Close()
			delete(set, id)
		}
	}
}

// WriteMarkers implements txn.MarkerWriter.
func (w *markerWriter) WriteMarkers(ctx context.Context, m txn.Marker) map[kafka.TopicPartition]int16 {
	out := make(map[kafka.TopicPartition]int16, len(m.Partitions))
	snap := w.b.meta.Snapshot()
	byLeader := map[int32][]kafka.TopicPartition{}
	for _, tp := range m.Partitions {
		ps, ok := snap.Partition(tp.Topic, tp.Partition)
		switch {
		case !ok:
			// Not in the metadata: Kafka treats the partition as deleted
			// and stops waiting for its marker.
			out[tp] = 0
			continue
		case ps.Leader < 0:
			// Known but without a leader (an election under way): Kafka's
			// unknown-destination queue; retried until a leader has it.
			out[tp] = kerr.LeaderNotAvailable.Code
			continue
		}
		byLeader[ps.Leader] = append(byLeader[ps.Leader], tp)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for leader, tps := range byLeader {
		if leader == w.b.ID() {
			// This broker leads them: the same WriteTxnMarkers handler,
			// called in process (no loopback round trip; the request
			// metrics do not count it).
			wg.Add(1)
			go func(tps []kafka.TopicPartition) {
				defer wg.Done()
				codes := w.sendLocal(ctx, m, tps)
				mu.Lock()
				defer mu.Unlock()
				for tp, code := range codes {
					out[tp] = code
				}
			}(tps)
			continue
		}
		addr, ok := w.b.interBrokerAddr(leader)
		if !ok || !snap.Alive(leader) {
			// Kafka's Node.noNode: the leader is not a live broker with
			// an inter-broker endpoint (unknown destination), retried.
			for _, tp := range tps {
				out[tp] = kerr.LeaderNotAvailable.Code
			}
			continue
		}
		wg.Add(1)
		go func(leader int32, addr string, tps []kafka.TopicPartition) {
			defer wg.Done()
			codes := w.send(ctx, w.client(leader, addr), m, tps)
			mu.Lock()
			defer mu.Unlock()
			for tp, code := range codes {
				out[tp] = code
			}
		}(leader, addr, tps)
	}
	wg.Wait()
	return out
}

// sendLocal hands the WriteTxnMarkers for tps, led by this broker, to
// its own handler and returns the codes.
func (w *markerWriter) sendLocal(ctx context.Context, m txn.Marker, tps []kafka.TopicPartition) map[kafka.TopicPartition]int16 {
	req := markerRequest(m, tps)
	req.Version = 1 // Kafka 2.8's and the handler's highest
	kresp, err := w.b.handleWriteTxnMarkers(&request{ctx: ctx, body: req})
	if err != nil {
		out := make(map[kafka.TopicPartition]int16, len(tps))
		for _, tp := range tps {
			out[tp] = kerr.UnknownServerError.Code
		}
		return out
	}
	return markerCodes(kresp.(*kmsg.WriteTxnMarkersResponse), m, tps)
}

// markerRequest is the WriteTxnMarkers of m for tps.
func markerRequest(m txn.Marker, tps []kafka.TopicPartition) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = m.ProducerID, m.ProducerEpoch, m.Commit, m.CoordinatorEpoch
	idx := map[string]int{}
	for _, tp := range tps {
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(mk.Topics)
			idx[tp.Topic] = i
			t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			t.Topic = tp.Topic
			mk.Topics = append(mk.Topics, t)
		}
		mk.Topics[i].Partitions = append(mk.Topics[i].Partitions, tp.Partition)
	}
	req.Markers = append(req.Markers, mk)
	return req
}

// send sends one WriteTxnMarkers with m for tps and returns the codes.
func (w *markerWriter) send(ctx context.Context, c *peer.Client, m txn.Marker, tps []kafka.TopicPartition) map[kafka.TopicPartition]int16 {
	req := markerRequest(m, tps)
	out := make(map[kafka.TopicPartition]int16, len(tps))
	fill := func(code int16) map[kafka.TopicPartition]int16 {
		for _, tp := range tps {
			out[tp] = code
		}
		return out
	}
	kresp, err := c.Request(ctx, req)
	switch {
	case errors.Is(err, peer.ErrUnsupported):
		// A leader without WriteTxnMarkers: Kafka's completion handler
		// takes UNSUPPORTED_VERSION as "this partition is done".
		return fill(kerr.UnsupportedVersion.Code)
	case err != nil:
		return fill(kerr.NetworkException.Code)
	}
	return markerCodes(kresp.(*kmsg.WriteTxnMarkersResponse), m, tps)
}

// markerCodes reads the codes of m's partitions from resp.
func markerCodes(resp *kmsg.WriteTxnMarkersResponse, m txn.Marker, tps []kafka.TopicPartition) map[kafka.TopicPartition]int16 {
	out := make(map[kafka.TopicPartition]int16, len(tps))
	for _, rm := range resp.Markers {
		if rm.ProducerID != m.ProducerID {
			continue
		}
		for _, t := range rm.Topics {
			for _, p := range t.Partitions {
				out[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
	}
	return out
}
