package broker

// Fetch sessions (KIP-227): the glue between the Fetch handler's kmsg
// values and broker/fetchsession's plain ones. The handler asks for a
// context before reading (fetchSessionContext), reads the partitions the
// context names (for an incremental fetch: the whole session, given to it
// as request topics by sessionTopics), and, once the response is built,
// finishFetchSession drops the partitions an incremental response need
// not carry and sets the session id.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/fetchsession"
	"samsa/broker/purgatory"
	"samsa/config"
	"samsa/kafka"
)

func newFetchSessionCache(cfg *config.Broker, opts Options) *fetchsession.Cache {
	return fetchsession.NewCache(fetchsession.Config{
		Slots:      int(cfg.MaxIncrementalFetchSessionCacheSlots),
		SweepEvery: opts.FetchSessionSweepEvery,
		Now:        opts.Now,
		Log:        opts.Logger.WithField("component", "fetchsession"),
	})
}

// fetchSessionContext returns how a v7+ FetchRequest is served; nil for
// the common sessionless fetch (session 0, epoch -1), which needs nothing
// from the cache (and costs the fetch path no allocation).
func (b *Broker) fetchSessionContext(r *request, req *kmsg.FetchRequest) *fetchsession.Context {
	if req.SessionID == fetchsession.InvalidSessionID && req.SessionEpoch == fetchsession.FinalEpoch {
		return nil
	}
	changedOnly := b.fetchChangedOnly(r, req)
	if req.ReplicaID >= 0 && changedOnly {
		// An authorised follower's session fetch: its idle partitions,
		// which the session will not read, are caught up as of now
		// (replica/isr_caught_up.go).
		b.replicas.FollowerFetched(req.ReplicaID)
	}
	n := 0
	for _, t := range req.Topics {
		n += len(t.Partitions)
	}
	sr := fetchsession.Request{SessionID: req.SessionID, Epoch: req.SessionEpoch, Follower: req.ReplicaID >= 0,
		Partitions: make([]fetchsession.Entry, 0, n), ChangedOnly: changedOnly}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			sr.Partitions = append(sr.Partitions, fetchsession.Entry{
				TP: kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				Req: fetchsession.PartitionRequest{FetchOffset: p.FetchOffset, LogStartOffset: p.LogStartOffset,
					MaxBytes: p.PartitionMaxBytes, CurrentLeaderEpoch: p.CurrentLeaderEpoch,
					LastFetchedEpoch: p.LastFetchedEpoch},
			})
		}
	}
	for _, t := range req.ForgottenTopics {
		for _, p := range t.Partitions {
			sr.Forgotten = append(sr.Forgotten, kafka.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	return b.fetchSessions.NewContext(sr)
}

// fetchChangedOnly reports whether an incremental fetch may examine only
// the session's changed partitions (fetchsession.Request.ChangedOnly): when
// every partition's authorization is decided the same way as at the
// session's last answer without looking. Without an authorizer nothing is
// decided; a follower allowed ClusterAction is allowed every topic. A
// consumer under an authorizer is decided topic by topic on each fetch (an
// ACL may have changed), so its fetch examines the whole session, as Kafka's.
func (b *Broker) fetchChangedOnly(r *request, req *kmsg.FetchRequest) bool {
	if b.authz == nil {
		return true
	}
	return req.ReplicaID >= 0 && b.authorizedCluster(r, acl.OpClusterAction)
}

// watchFetchChanges makes the fetch session cache hear of every change the
// fetch purgatory is told about (Cache.Changed), so that a changed-only
// incremental fetch knows which partitions to examine. Called once the
// replica manager exists.
func (b *Broker) watchFetchChanges() {
	b.replicas.Fetch.SetObserver(purgatory.Observer{Changed: b.fetchSessions.Changed, ChangedAll: b.fetchSessions.ChangedAll})
}

// sessionTopics returns an incremental context's partitions (the whole
// session, with the latest request values) as request topics, a topic
// per run of consecutive partitions of one topic.
func sessionTopics(x *fetchsession.Context) []kmsg.FetchRequestTopic {
	parts := x.Partitions()
	var topics []kmsg.FetchRequestTopic
	for _, e := range parts {
		if len(topics) == 0 || topics[len(topics)-1].Topic != e.TP.Topic {
			t := kmsg.NewFetchRequestTopic()
			t.Topic = e.TP.Topic
			topics = append(topics, t)
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = e.TP.Partition
		p.FetchOffset = e.Req.FetchOffset
		p.LogStartOffset = e.Req.LogStartOffset
		p.PartitionMaxBytes = e.Req.MaxBytes
		p.CurrentLeaderEpoch = e.Req.CurrentLeaderEpoch
		p.LastFetchedEpoch = e.Req.LastFetchedEpoch
		t := &topics[len(topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	return topics
}

// finishFetchSession completes x with the built response: it sets the
// session id and, for an incremental fetch, removes the partitions (and
// then empty topics) with nothing new for the client. The response's
// partitions are in the order of x's partitions.
func finishFetchSession(x *fetchsession.Context, resp *kmsg.FetchResponse, hot []bool) {
	if x.Kind == fetchsession.Sessionless {
		resp.SessionID = fetchsession.InvalidSessionID
		return
	}
	n := 0
	for _, t := range resp.Topics {
		n += len(t.Partitions)
	}
	resps := make([]fetchsession.PartitionResponse, 0, n)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			resps = append(resps, fetchsession.PartitionResponse{HighWatermark: p.HighWatermark,
				LogStartOffset: p.LogStartOffset, LastStableOffset: p.LastStableOffset,
				HasRecords: len(p.RecordBatches) > 0, ErrorCode: p.ErrorCode,
				PreferredReadReplica: p.PreferredReadReplica >= 0})
		}
	}
	for i := range resps {
		resps[i].Hot = i < len(hot) && hot[i]
	}
	if len(resps) != len(x.Partitions()) {
		// Not the partitions the context named (cannot happen: the handler
		// answers every partition it read); answer in full, no session.
		resp.SessionID = fetchsession.InvalidSessionID
		return
	}
	include := make([]bool, len(resps))
	resp.SessionID = x.Finish(resps, include)
	if x.Kind != fetchsession.Incremental {
		return
	}
	i := 0
	topics := resp.Topics[:0]
	for _, t := range resp.Topics {
		kept := t.Partitions[:0]
		for _, p := range t.Partitions {
			if include[i] {
				kept = append(kept, p)
			}
			i++
		}
		if len(kept) > 0 {
			t.Partitions = kept
			topics = append(topics, t)
		}
	}
	resp.Topics = topics
}

// FetchSessionStats returns the fetch session cache's gauges (sessions,
// partitions cached, evictions so far).
func (b *Broker) FetchSessionStats() fetchsession.Stats { return b.fetchSessions.Stats() }

// FetchSessionSize returns how many partitions fetch session id holds, if
// it is cached.
func (b *Broker) FetchSessionSize(id int32) (int, bool) { return b.fetchSessions.SessionSize(id) }
