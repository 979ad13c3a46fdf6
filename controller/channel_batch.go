package controller

import (
	"errors"
	"maps"
	"slices"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/kafka"
)

var errNoEndpoint = errors.New("controller: broker has no endpoint for the inter-broker listener")

// requestBatch collects the control requests of one event, per broker, and sends them when
// the event is done (Kafka's ControllerBrokerRequestBatch): one LeaderAndIsr, one
// UpdateMetadata and up to two StopReplica (delete=false, delete=true) per broker. A later
// entry for the same broker and partition replaces an earlier one. Owned by the event
// goroutine.
type requestBatch struct {
	leaderAndIsr map[int32]map[kafka.TopicPartition]laiEntry
	umBrokers    map[int32]struct{}
	umParts      map[kafka.TopicPartition]struct{}
	stopReplica  map[int32]map[kafka.TopicPartition]stopEntry
}

type laiEntry struct {
	state            LeaderAndIsr
	replicas         []int32
	adding, removing []int32 // reassignment in progress (LeaderAndIsr v3+)
	isNew            bool
}

type stopEntry struct {
	deletePartition bool
	leaderEpoch     int32 // -1 unknown, -2 topic being deleted (StopReplica v3)
}

func newRequestBatch() *requestBatch {
	return &requestBatch{
		leaderAndIsr: make(map[int32]map[kafka.TopicPartition]laiEntry),
		umBrokers:    make(map[int32]struct{}),
		umParts:      make(map[kafka.TopicPartition]struct{}),
		stopReplica:  make(map[int32]map[kafka.TopicPartition]stopEntry),
	}
}

func (b *requestBatch) empty() bool {
	return len(b.leaderAndIsr) == 0 && len(b.umBrokers) == 0 && len(b.stopReplica) == 0
}

// addLeaderAndIsr queues a LeaderAndIsr partition state for brokers, and an UpdateMetadata
// for tp to every live broker (Kafka's addLeaderAndIsrRequestForBrokers).
func (b *requestBatch) addLeaderAndIsr(cc *controllerContext, brokers []int32, tp kafka.TopicPartition, state LeaderAndIsr, replicas []int32, isNew bool) {
	for _, id := range brokers {
		if id < 0 {
			continue
		}
		m := brokerEntries(b.leaderAndIsr, id)
		prev, had := m[tp]
		m[tp] = laiEntry{state: state.clone(), replicas: slices.Clone(replicas), isNew: isNew || (had && prev.isNew),
			adding: slices.Clone(cc.adding[tp]), removing: slices.Clone(cc.removing[tp])}
	}
	b.addUpdateMetadata(cc.liveBrokerIDs(), []kafka.TopicPartition{tp})
}

// brokerEntries returns the partition entries queued for broker id in m, adding an empty
// map for it first if there is none.
func brokerEntries[E laiEntry | stopEntry](m map[int32]map[kafka.TopicPartition]E, id int32) map[kafka.TopicPartition]E {
	entries := m[id]
	if entries == nil {
		entries = make(map[kafka.TopicPartition]E)
		m[id] = entries
	}
	return entries
}

// addUpdateMetadata queues UpdateMetadata to brokers covering tps (which may be empty: the
// request then carries only the live brokers).
func (b *requestBatch) addUpdateMetadata(brokers []int32, tps []kafka.TopicPartition) {
	for _, id := range brokers {
		if id >= 0 {
			b.umBrokers[id] = struct{}{}
		}
	}
	for _, tp := range tps {
		b.umParts[tp] = struct{}{}
	}
}

// addStopReplica queues a StopReplica for tp to brokers.
func (b *requestBatch) addStopReplica(brokers []int32, tp kafka.TopicPartition, deletePartition bool, leaderEpoch int32) {
	for _, id := range brokers {
		if id < 0 {
			continue
		}
		m := brokerEntries(b.stopReplica, id)
		prev, had := m[tp]
		m[tp] = stopEntry{deletePartition: deletePartition || (had && prev.deletePartition), leaderEpoch: leaderEpoch}
	}
}

// requestSender is where a batch hands its requests: the ChannelManager.
type requestSender interface {
	send(broker int32, o outbound)
	interBrokerListener() string
}

// requestHeader is what every control request carries.
type requestHeader struct {
	controllerID    int32
	controllerEpoch int32
	brokerEpoch     int64 // the receiving broker's epoch
}

// laiPartition is a LeaderAndIsr partition state snapshot.
type laiPartition struct {
	tp               kafka.TopicPartition
	topicID          [16]byte
	state            LeaderAndIsr
	replicas         []int32
	adding, removing []int32
	isNew            bool
}

// umPartition is an UpdateMetadata partition state snapshot.
type umPartition struct {
	tp       kafka.TopicPartition
	topicID  [16]byte
	state    LeaderAndIsr // Leader is LeaderDuringDelete for topics being deleted
	replicas []int32
	offline  []int32
}

// send hands every queued request to the channel manager, LeaderAndIsr first, then
// UpdateMetadata, then StopReplica (Kafka's sendRequestsToBrokers order), and resets b.
// Requests are snapshots: the sender goroutines never read cc.
//
// hooks (nil for none) receive answers on the sender goroutine (they must only enqueue).
func (b *requestBatch) send(cc *controllerContext, controllerID int32, ch requestSender, vers requestVersions, log logrus.FieldLogger,
	hooks *responseHooks) {
	if hooks == nil {
		hooks = &responseHooks{}
	}
	s := batchSend{cc: cc, controllerID: controllerID, ch: ch, vers: vers, log: log, hooks: hooks}
	s.leaderAndIsr(b.leaderAndIsr)
	s.updateMetadata(b.umBrokers, b.umParts)
	s.stopReplica(b.stopReplica)
	*b = *newRequestBatch()
}

// batchSend is what requestBatch.send's steps share.
type batchSend struct {
	cc           *controllerContext
	controllerID int32
	ch           requestSender
	vers         requestVersions
	log          logrus.FieldLogger
	hooks        *responseHooks
}

// header is what every control request to broker id carries.
func (s *batchSend) header(id int32) requestHeader {
	return requestHeader{controllerID: s.controllerID, controllerEpoch: s.cc.epoch, brokerEpoch: s.cc.liveBrokers[id].Epoch}
}

// leaderAndIsr sends one LeaderAndIsr to each live broker with queued entries.
func (s *batchSend) leaderAndIsr(queued map[int32]map[kafka.TopicPartition]laiEntry) {
	cc := s.cc
	for _, id := range slices.Sorted(maps.Keys(queued)) {
		if !cc.isLive(id) {
			continue
		}
		parts, leaders := s.leaderAndIsrParts(queued[id])
		h := s.header(id)
		s.log.WithFields(logrus.Fields{"broker": id, "controller_epoch": cc.epoch, "partitions": len(parts)}).
			Debug("controller: sending LeaderAndIsr request")
		names := make(map[[16]byte]string) // v5 answers name topics by id
		for _, p := range parts {
			names[p.topicID] = p.tp.Topic
		}
		log, hooks := s.log, s.hooks
		s.ch.send(id, outbound{
			key:        4,
			maxVersion: s.vers.leaderAndIsr,
			build:      func(v int16) kmsg.Request { return buildLeaderAndIsr(v, h, parts, leaders) },
			onResponse: func(resp kmsg.Response, err error) {
				logLeaderAndIsrResponse(log, id, resp, err, names)
				if err == nil && hooks.onLeaderAndIsr != nil {
					if o, ok := leaderAndIsrOutcomeOf(resp, names); ok {
						hooks.onLeaderAndIsr(id, h.brokerEpoch, o)
					}
				}
			},
		})
	}
}

// leaderAndIsrParts snapshots one broker's queued entries, sorted, and the live leaders
// they name (with their inter-broker endpoints).
func (s *batchSend) leaderAndIsrParts(entries map[kafka.TopicPartition]laiEntry) ([]laiPartition, []liveLeader) {
	cc := s.cc
	parts := make([]laiPartition, 0, len(entries))
	leaderIDs := map[int32]struct{}{}
	for tp, e := range entries {
		parts = append(parts, laiPartition{tp: tp, topicID: cc.topicIDs[tp.Topic], state: e.state, replicas: e.replicas,
			adding: e.adding, removing: e.removing, isNew: e.isNew})
		leaderIDs[e.state.Leader] = struct{}{}
	}
	sortByPartition(parts)
	var leaders []liveLeader
	for _, lid := range slices.Sorted(maps.Keys(leaderIDs)) {
		if lb, ok := cc.liveBrokers[lid]; ok {
			if ep, ok := lb.endpoint(s.ch.interBrokerListener()); ok {
				leaders = append(leaders, liveLeader{id: lid, host: ep.Host, port: ep.Port})
			}
		}
	}
	return parts, leaders
}

// updateMetadata sends one UpdateMetadata, the same snapshot of tps, to each live broker of
// brokers.
func (s *batchSend) updateMetadata(brokers map[int32]struct{}, tps map[kafka.TopicPartition]struct{}) {
	if len(brokers) == 0 {
		return
	}
	cc := s.cc
	parts := make([]umPartition, 0, len(tps))
	for tp := range tps {
		l, ok := cc.leadership[tp]
		if !ok {
			continue
		}
		if _, deleting := cc.topicsToBeDeleted[tp.Topic]; deleting {
			l = l.clone()
			l.Leader = LeaderDuringDelete
		}
		parts = append(parts, umPartition{tp: tp, topicID: cc.topicIDs[tp.Topic], state: l,
			replicas: slices.Clone(cc.replicas(tp)), offline: cc.offlineReplicas(tp)})
	}
	sortByPartition(parts)
	live := make([]LiveBroker, 0, len(cc.liveBrokers))
	for _, id := range cc.liveBrokerIDs() {
		live = append(live, cc.liveBrokers[id])
	}
	for _, id := range slices.Sorted(maps.Keys(brokers)) {
		if !cc.isLive(id) {
			continue
		}
		h := s.header(id)
		s.log.WithFields(logrus.Fields{"broker": id, "controller_epoch": cc.epoch, "partitions": len(parts)}).
			Debug("controller: sending UpdateMetadata request")
		log := s.log
		s.ch.send(id, outbound{
			key:        6,
			maxVersion: s.vers.updateMetadata,
			build:      func(v int16) kmsg.Request { return buildUpdateMetadata(v, h, parts, live) },
			onResponse: func(resp kmsg.Response, err error) { logUpdateMetadataResponse(log, id, resp, err) },
		})
	}
}

// stopReplica sends each live broker with queued entries up to two StopReplica requests:
// delete=false first, then delete=true.
func (s *batchSend) stopReplica(queued map[int32]map[kafka.TopicPartition]stopEntry) {
	for _, id := range slices.Sorted(maps.Keys(queued)) {
		if !s.cc.isLive(id) {
			continue
		}
		for _, del := range []bool{false, true} {
			var parts []stopPartition
			for tp, e := range queued[id] {
				if e.deletePartition == del {
					parts = append(parts, stopPartition{tp: tp, leaderEpoch: e.leaderEpoch})
				}
			}
			if len(parts) == 0 {
				continue
			}
			sortByPartition(parts)
			h := s.header(id)
			log, hooks := s.log, s.hooks
			s.ch.send(id, outbound{
				key:        5,
				maxVersion: s.vers.stopReplica,
				build:      func(v int16) kmsg.Request { return buildStopReplica(v, h, del, parts) },
				onResponse: func(resp kmsg.Response, err error) {
					logStopReplicaResponse(log, id, resp, err)
					if del && hooks.onDeleted != nil {
						hooks.onDeleted(id, stopReplicaResults(parts, resp, err))
					}
				},
			})
		}
	}
}

// responseHooks are the control answers the event goroutine needs, called on the sender
// goroutine.
type responseHooks struct {
	// onDeleted receives the outcome of each StopReplica with delete=true, per partition.
	onDeleted func(broker int32, results map[kafka.TopicPartition]error)
	// onLeaderAndIsr receives each delivered LeaderAndIsr answer without a top-level error;
	// brokerEpoch is the epoch of the registration the request went to.
	onLeaderAndIsr func(broker int32, brokerEpoch int64, o leaderAndIsrOutcome)
}

type liveLeader struct {
	id   int32
	host string
	port int32
}

type stopPartition struct {
	tp          kafka.TopicPartition
	leaderEpoch int32
}

// partitionSnapshot is a per-partition entry of a control request being built.
type partitionSnapshot interface {
	laiPartition | umPartition | stopPartition
	topicPartition() kafka.TopicPartition
}

func (p laiPartition) topicPartition() kafka.TopicPartition  { return p.tp }
func (p umPartition) topicPartition() kafka.TopicPartition   { return p.tp }
func (p stopPartition) topicPartition() kafka.TopicPartition { return p.tp }

// sortByPartition orders parts by topic, then partition: the order the builders expect
// (topicRuns).
func sortByPartition[P partitionSnapshot](parts []P) {
	slices.SortFunc(parts, func(a, b P) int { return kafka.ComparePartitions(a.topicPartition(), b.topicPartition()) })
}

// logLeaderAndIsrResponse logs a failed send, a top-level error and each partition error.
// names maps the request's topic ids to names (a v5 answer names topics by id only).
func logLeaderAndIsrResponse(log logrus.FieldLogger, broker int32, resp kmsg.Response, err error, names map[[16]byte]string) {
	var code int16
	var parts []partitionErr
	if r, ok := resp.(*kmsg.LeaderAndISRResponse); ok {
		code = r.ErrorCode
		for _, p := range r.Partitions {
			parts = append(parts, partitionErr{p.Topic, p.Partition, p.ErrorCode})
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				topic := p.Topic
				if topic == "" {
					topic = names[t.TopicID]
				}
				parts = append(parts, partitionErr{topic, p.Partition, p.ErrorCode})
			}
		}
	}
	logControlResponse(log, broker, "LeaderAndIsr", err, code, parts)
}

// logUpdateMetadataResponse logs a failed send or an error code.
func logUpdateMetadataResponse(log logrus.FieldLogger, broker int32, resp kmsg.Response, err error) {
	var code int16
	if r, ok := resp.(*kmsg.UpdateMetadataResponse); ok {
		code = r.ErrorCode
	}
	logControlResponse(log, broker, "UpdateMetadata", err, code, nil)
}

// logStopReplicaResponse logs a failed send, a top-level error and each partition error.
func logStopReplicaResponse(log logrus.FieldLogger, broker int32, resp kmsg.Response, err error) {
	var code int16
	var parts []partitionErr
	if r, ok := resp.(*kmsg.StopReplicaResponse); ok {
		code = r.ErrorCode
		for _, p := range r.Partitions {
			parts = append(parts, partitionErr{p.Topic, p.Partition, p.ErrorCode})
		}
	}
	logControlResponse(log, broker, "StopReplica", err, code, parts)
}

// partitionErr is one partition's error code in a control response.
type partitionErr struct {
	topic     string
	partition int32
	code      int16
}

// logControlResponse logs the outcome of one control request (api names it) to broker: a
// failed send, else a non-zero top-level code, and the partition errors: each at DEBUG, and
// one WARN line per error code with its count and first partition. One line per partition
// would be thousands of WARN lines per request at scale: a broker that hears of a broker
// failure after a controlled shutdown already removed it from every ISR answers each
// partition's unchanged state with STALE_CONTROLLER_EPOCH (its leader epoch is not newer;
// Kafka sends the same requests and ignores those answers).
func logControlResponse(log logrus.FieldLogger, broker int32, api string, err error, code int16, parts []partitionErr) {
	l := log.WithField("broker", broker)
	if err != nil {
		l.WithError(err).Warn("controller: " + api + " request not delivered")
		return
	}
	if code != 0 {
		l.WithError(kerr.ErrorForCode(code)).Warn("controller: " + api + " request failed")
	}
	type summary struct {
		count int
		first partitionErr
	}
	byCode := make(map[int16]*summary)
	for _, p := range parts {
		if p.code == 0 {
			continue
		}
		l.WithFields(logrus.Fields{"topic": p.topic, "partition": p.partition}).
			WithError(kerr.ErrorForCode(p.code)).Debug("controller: " + api + " partition error")
		if s := byCode[p.code]; s != nil {
			s.count++
		} else {
			byCode[p.code] = &summary{count: 1, first: p}
		}
	}
	for _, c := range slices.Sorted(maps.Keys(byCode)) {
		s := byCode[c]
		l.WithFields(logrus.Fields{"partitions": s.count, "topic": s.first.topic, "partition": s.first.partition}).
			WithError(kerr.ErrorForCode(c)).Warn("controller: " + api + " partition errors")
	}
}

// stopReplicaResults maps a StopReplica outcome to one error per requested partition: the
// delivery error or top-level error for all of them, else each partition's own error code.
func stopReplicaResults(parts []stopPartition, resp kmsg.Response, err error) map[kafka.TopicPartition]error {
	out := make(map[kafka.TopicPartition]error, len(parts))
	r, ok := resp.(*kmsg.StopReplicaResponse)
	if err == nil && !ok {
		err = errors.New("controller: unexpected StopReplica response")
	}
	if err == nil && r.ErrorCode != 0 {
		err = kerr.ErrorForCode(r.ErrorCode)
	}
	for _, p := range parts {
		out[p.tp] = err
	}
	if err != nil {
		return out
	}
	for _, pr := range r.Partitions {
		tp := kafka.TopicPartition{Topic: pr.Topic, Partition: pr.Partition}
		if _, asked := out[tp]; asked && pr.ErrorCode != 0 {
			out[tp] = kerr.ErrorForCode(pr.ErrorCode)
		}
	}
	return out
}
