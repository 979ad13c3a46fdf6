package fetchsession

import "github.com/twmb/franz-go/pkg/kerr"
import "samsa/kafka"

// Handler is the fetching side of a session (Kafka's
// FetchSessionHandler), for Samsa's follower fetchers: it remembers what
// the leader's session holds and turns each round's full partition list
// into an incremental request, naming only partitions whose request values
// changed and forgetting those no longer fetched. A Handler is owned by
// one fetcher goroutine; it is not safe for concurrent use.
type Handler struct {
	id    int32 // InvalidSessionID: none yet
	epoch int32 // InitialEpoch: the next request is full (and asks for a session)
	sent  map[kafka.TopicPartition]PartitionRequest
	next  map[kafka.TopicPartition]PartitionRequest // reused for the next round

	// Reused by Build; valid until the next Build.
	send   []Entry
	forget []kafka.TopicPartition
}

// Build returns the session id and epoch of the next request, the
// partitions it must name and the ones it must forget, given every
// partition the round fetches (order kept). A full request (epoch 0) names
// them all. The returned slices are reused by the next Build.
func (h *Handler) Build(parts []Entry) (sessionID, epoch int32, send []Entry, forget []kafka.TopicPartition) {
	if h.next == nil {
		h.next = make(map[kafka.TopicPartition]PartitionRequest, len(parts))
	}
	clear(h.next)
	h.send, h.forget = h.send[:0], h.forget[:0]
	full := h.epoch == InitialEpoch
	for _, e := range parts {
		h.next[e.TP] = e.Req
		if full {
			h.send = append(h.send, e)
			continue
		}
		if prev, ok := h.sent[e.TP]; !ok || prev != e.Req {
			h.send = append(h.send, e)
		}
	}
	if !full {
		for tp := range h.sent {
			if _, ok := h.next[tp]; !ok {
				h.forget = append(h.forget, tp)
			}
		}
	}
	h.sent, h.next = h.next, h.sent
	return h.id, h.epoch, h.send, h.forget
}

// NeedsFull reports whether the next request must be full (epoch 0): no
// session yet, or the last one failed. Only then must Build see every
// partition; otherwise BuildDelta suffices.
func (h *Handler) NeedsFull() bool { return h.epoch == InitialEpoch }

// BuildDelta is Build for a caller that knows what changed since its
// previous Build or BuildDelta: changed are the partitions added or with
// new request values, forgotten those no longer fetched. It never looks at
// the unchanged partitions. Only valid when NeedsFull is false.
func (h *Handler) BuildDelta(changed []Entry, forgotten []kafka.TopicPartition) (sessionID, epoch int32, send []Entry, forget []kafka.TopicPartition) {
	if h.sent == nil {
		h.sent = make(map[kafka.TopicPartition]PartitionRequest, len(changed))
	}
	h.send, h.forget = h.send[:0], h.forget[:0]
	for _, e := range changed {
		if prev, ok := h.sent[e.TP]; !ok || prev != e.Req {
			h.sent[e.TP] = e.Req
			h.send = append(h.send, e)
		}
	}
	for _, tp := range forgotten {
		if _, ok := h.sent[tp]; ok {
			delete(h.sent, tp)
			h.forget = append(h.forget, tp)
		}
	}
	return h.id, h.epoch, h.send, h.forget
}

// HandleResponse takes the answer's top-level error code and session id
// and reports whether the answer's partitions may be used. On a session
// error the next request is full: FETCH_SESSION_ID_NOT_FOUND starts a new
// session, any other error (INVALID_FETCH_SESSION_EPOCH, or an answer in
// another session) closes this one and starts anew, as Kafka's
// FetchSessionHandler.handleResponse.
func (h *Handler) HandleResponse(errorCode int16, sessionID int32) bool {
	switch {
	case errorCode == kerr.FetchSessionIDNotFound.Code:
		h.id, h.epoch = InvalidSessionID, InitialEpoch
		return false
	case errorCode != 0:
		h.epoch = InitialEpoch
		return false
	}
	if h.epoch == InitialEpoch {
		// A full answer: a session if the leader made one, else full again.
		h.id = sessionID
		if sessionID != InvalidSessionID {
			h.epoch = NextEpoch(InitialEpoch)
		}
		return true
	}
	if sessionID == InvalidSessionID {
		// The leader closed the session (all partitions forgotten).
		h.id, h.epoch = InvalidSessionID, InitialEpoch
		return true
	}
	if sessionID != h.id {
		h.epoch = InitialEpoch
		return false
	}
	h.epoch = NextEpoch(h.epoch)
	return true
}

// HandleError is called when a request failed without an answer
// (connection lost, timeout): the next request closes the session and
// starts a full one, since the leader may or may not have moved its epoch.
func (h *Handler) HandleError() { h.epoch = InitialEpoch }

// SessionID returns the current session id (InvalidSessionID: none).
func (h *Handler) SessionID() int32 { return h.id }
