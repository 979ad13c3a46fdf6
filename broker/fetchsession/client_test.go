package fetchsession

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestFetchSessionHandler: the fetching side sends everything in full at
// epoch 0, then only what changed, forgets what it stopped fetching, and
// falls back to a full request after a session error or a lost answer.
func TestFetchSessionHandler(t *testing.T) {
	var h Handler
	parts := entries("t", 3, 0)
	id, epoch, send, forget := h.Build(parts)
	if id != 0 || epoch != 0 || len(send) != 3 || len(forget) != 0 {
		t.Fatalf("first build: id %d epoch %d send %d forget %d", id, epoch, len(send), len(forget))
	}
	if !h.HandleResponse(0, 77) || h.SessionID() != 77 {
		t.Fatal("full answer with a session not taken")
	}
	// Partition 1 moved, partition 2 is no longer fetched.
	next := []Entry{parts[0], {TP: parts[1].TP, Req: PartitionRequest{FetchOffset: 5, MaxBytes: 1 << 20}}}
	id, epoch, send, forget = h.Build(next)
	if id != 77 || epoch != 1 || len(send) != 1 || send[0].TP != parts[1].TP || len(forget) != 1 || forget[0] != parts[2].TP {
		t.Fatalf("incremental build: id %d epoch %d send %v forget %v", id, epoch, send, forget)
	}
	if !h.HandleResponse(0, 77) {
		t.Fatal("incremental answer refused")
	}
	if _, epoch, send, _ = h.Build(next); epoch != 2 || len(send) != 0 {
		t.Fatalf("unchanged round: epoch %d send %v", epoch, send)
	}
	// The leader lost the session: the next request is full, new session.
	if h.HandleResponse(kerr.FetchSessionIDNotFound.Code, 0) {
		t.Fatal("a session error's answer was accepted")
	}
	if id, epoch, send, _ = h.Build(next); id != 0 || epoch != 0 || len(send) != 2 {
		t.Fatalf("after FETCH_SESSION_ID_NOT_FOUND: id %d epoch %d send %d", id, epoch, len(send))
	}
	h.HandleResponse(0, 88)
	h.Build(next)
	// An answer lost on the way: close and start anew (same id, epoch 0).
	h.HandleError()
	if id, epoch, send, _ = h.Build(next); id != 88 || epoch != 0 || len(send) != 2 {
		t.Fatalf("after a lost answer: id %d epoch %d send %d", id, epoch, len(send))
	}
	// A leader without slots answers full with no session: stay full.
	h.HandleResponse(0, 0)
	if id, epoch, _, _ = h.Build(next); id != 0 || epoch != 0 {
		t.Fatalf("sessionless leader: id %d epoch %d", id, epoch)
	}
}
