package throttle

import (
	"context"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// pending is a server.Pending that completes with resp.
type pending struct {
	kmsg.Response
	resp kmsg.Response
}

func (p pending) Wait(context.Context) (kmsg.Response, error) { return p.resp, nil }

func TestThrottleSetMillisAndPending(t *testing.T) {
	if Millis(math.MaxInt64) != math.MaxInt32 || Millis(12) != 12 {
		t.Fatal("Millis does not clamp to int32")
	}
	ct := kmsg.NewPtrCreateTopicsResponse()
	if got := Set(ct, 250).(*kmsg.CreateTopicsResponse); got.ThrottleMillis != 250 {
		t.Fatalf("CreateTopics throttle %d", got.ThrottleMillis)
	}
	if Set(nil, 5) != nil {
		t.Fatal("nil answer (acks=0) became an answer")
	}
	done := kmsg.NewPtrProduceResponse()
	p := Set(pending{Response: kmsg.NewPtrProduceResponse(), resp: done}, 40)
	w, ok := p.(interface {
		Wait(context.Context) (kmsg.Response, error)
	})
	if !ok {
		t.Fatalf("pending answer lost its Wait: %T", p)
	}
	resp, err := w.Wait(context.Background())
	if err != nil || resp.(*kmsg.ProduceResponse).ThrottleMillis != 40 {
		t.Fatalf("completed pending answer %+v, %v; want throttle 40", resp, err)
	}
}

func TestThrottleEmptyFetchAndCap(t *testing.T) {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 11
	req.MaxBytes, req.MinBytes = 50<<20, 1<<20
	CapFetch(req, 1000)
	if req.MaxBytes != 1000 || req.MinBytes != 1000 {
		t.Fatalf("capped to max %d min %d, want 1000, 1000", req.MaxBytes, req.MinBytes)
	}
	old := kmsg.NewPtrFetchRequest()
	old.Version, old.MaxBytes = 2, 7
	CapFetch(old, 1)
	if old.MaxBytes != 7 {
		t.Fatal("v2 fetch (no max_bytes) capped")
	}
	CapFetch(req, math.MaxFloat64) // inactive quota: unchanged
	if req.MaxBytes != 1000 {
		t.Fatal("unlimited window changed max_bytes")
	}
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	ft.Partitions = append(ft.Partitions, kmsg.NewFetchRequestTopicPartition())
	req.Topics = append(req.Topics, ft)
	resp := EmptyFetch(req, 300).(*kmsg.FetchResponse)
	if resp.ThrottleMillis != 300 || len(resp.Topics) != 0 || resp.SessionID != 0 || resp.Version != 11 {
		t.Fatalf("throttled fetch answer %+v", resp)
	}
}

func TestThrottleResponseSize(t *testing.T) {
	id := "c"
	body := kmsg.NewPtrMetadataRequest()
	body.Version = 9
	req, err := wire.ParseRequest(wire.AppendRequest(nil, body, 7, &id)[4:])
	if err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 9
	resp.ThrottleMillis = 1
	want := len(wire.AppendResponse(nil, req, resp)) - 4
	if got := ResponseSize(req, resp); got != want || got <= 0 {
		t.Fatalf("ResponseSize %d, want %d", got, want)
	}
}
