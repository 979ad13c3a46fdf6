package peer

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// FuzzPeerDecodeInto feeds arbitrary response frames to RequestInto's decoder, into a
// response reused across inputs as a fetcher reuses it: it must return an error, never panic.
func FuzzPeerDecodeInto(f *testing.F) {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	good := kmsg.NewPtrFetchResponse()
	good.SetVersion(12)
	t := kmsg.NewFetchResponseTopic()
	t.Topic = "t"
	p := kmsg.NewFetchResponseTopicPartition()
	p.RecordBatches = []byte("batches")
	t.Partitions = append(t.Partitions, p)
	good.Topics = append(good.Topics, t)
	frame := wire.AppendResponse(nil, &wire.Request{Header: wire.Header{Key: 1, Version: 12, Correlation: 7}}, good)[4:]
	f.Add(frame, int16(12))
	f.Add(frame[:9], int16(12))
	f.Add(frame, int16(4))
	f.Add([]byte{0, 0, 0, 7, 0x80}, int16(12))
	f.Add([]byte{}, int16(0))
	resp := kmsg.NewPtrFetchResponse()
	f.Fuzz(func(t *testing.T, frame []byte, version int16) {
		if version < 4 || version > 12 {
			version = 12
		}
		req.SetVersion(version)
		_ = decodeInto(frame, req, resp, 7)
	})
}
