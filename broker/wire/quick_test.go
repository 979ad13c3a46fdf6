package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestWireQuickRoundTrip(t *testing.T) {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(9)
	topic := "t"
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	req.Topics = append(req.Topics, mt)
	id := "cid"
	frame := AppendRequest(nil, req, 42, &id)
	got, err := ParseRequest(frame[4:])
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != 3 || got.Version != 9 || got.Correlation != 42 || got.ClientIDString() != "cid" || got.HeaderVersion != 2 {
		t.Fatalf("header %+v", got.Header)
	}
	b := got.Body.(*kmsg.MetadataRequest)
	if b.GetVersion() != 9 || len(b.Topics) != 1 || *b.Topics[0].Topic != "t" {
		t.Fatalf("body %+v", b)
	}
	resp := b.ResponseKind().(*kmsg.MetadataResponse)
	out := AppendResponse(nil, got, resp)
	r2, err := ParseResponse(out[4:], req, 42)
	if err != nil {
		t.Fatal(err)
	}
	if r2.GetVersion() != 9 {
		t.Fatal(r2.GetVersion())
	}
}
