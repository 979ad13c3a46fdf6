package wire

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxAllocFactor bounds what ParseRequest may allocate: maxAllocFactor × len(frame) plus
// allocSlack. kmsg sizes each array from its count after checking count × (minimum wire size
// of an element) ≤ remaining bytes, so decoding allocates at most the ratio of an element's Go
// size to its minimum wire size times the frame, plus per-element strings and pointers.
// TestWireDecodeAllocationBounded measures the worst ratio we can provoke and keeps it here.
const (
	maxAllocFactor = 64 * raceAllocFactor
	allocSlack     = 16 << 10
)

// seedRequests returns valid requests of several keys and versions, with content.
func seedRequests() []kmsg.Request {
	var out []kmsg.Request
	topic := "orders"

	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	md.Topics = append(md.Topics, mt, mt)
	for _, v := range []int16{0, 1, 4, 9} {
		r := *md
		r.SetVersion(v)
		out = append(out, &r)
	}

	pr := kmsg.NewPtrProduceRequest()
	pr.Acks = -1
	pr.TimeoutMillis = 30000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = 3
	pp.Records = bytes.Repeat([]byte{0xab}, 61)
	pt.Partitions = append(pt.Partitions, pp)
	pr.Topics = append(pr.Topics, pt)
	for _, v := range []int16{0, 3, 8, 9} {
		r := *pr
		r.SetVersion(v)
		out = append(out, &r)
	}

	fr := kmsg.NewPtrFetchRequest()
	fr.ReplicaID = -1
	fr.MaxWaitMillis = 500
	fr.MinBytes = 1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset = 42
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fr.Topics = append(fr.Topics, ft)
	for _, v := range []int16{0, 4, 11, 12} {
		r := *fr
		r.SetVersion(v)
		out = append(out, &r)
	}

	for _, v := range []int16{0, 3} {
		r := kmsg.NewPtrApiVersionsRequest()
		r.SetVersion(v)
		r.ClientSoftwareName, r.ClientSoftwareVersion = "sarama", "1.61.1"
		out = append(out, r)
	}

	li := kmsg.NewPtrLeaderAndISRRequest()
	li.ControllerID, li.ControllerEpoch = 1, 3
	ls := kmsg.NewLeaderAndISRRequestTopicPartition()
	ls.Topic, ls.Leader, ls.ISR, ls.Replicas = topic, 1, []int32{1, 2}, []int32{1, 2, 3}
	li.PartitionStates = append(li.PartitionStates, ls)
	lt := kmsg.NewLeaderAndISRRequestTopicState()
	lt.Topic = topic
	lt.PartitionStates = append(lt.PartitionStates, ls)
	li.TopicStates = append(li.TopicStates, lt)
	for _, v := range []int16{0, 1, 4, 5} {
		r := *li
		r.SetVersion(v)
		out = append(out, &r)
	}

	cs := kmsg.NewPtrControlledShutdownRequest()
	cs.BrokerID = 2
	out = append(out, cs)

	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Group, jg.ProtocolType = "g", "consumer"
	proto := kmsg.NewJoinGroupRequestProtocol()
	proto.Name, proto.Metadata = "range", []byte{0, 1, 2}
	jg.Protocols = append(jg.Protocols, proto)
	for _, v := range []int16{0, 5, 6} {
		r := *jg
		r.SetVersion(v)
		out = append(out, &r)
	}

	ct := kmsg.NewPtrCreateTopicsRequest()
	ctt := kmsg.NewCreateTopicsRequestTopic()
	ctt.Topic, ctt.NumPartitions, ctt.ReplicationFactor = topic, 3, 1
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = "retention.ms", kmsg.StringPtr("1000")
	ctt.Configs = append(ctt.Configs, cfg)
	ct.Topics = append(ct.Topics, ctt)
	for _, v := range []int16{0, 5} {
		r := *ct
		r.SetVersion(v)
		out = append(out, &r)
	}
	return out
}

// FuzzWireRequest feeds arbitrary frames to ParseRequest. Invariants: it never panics; it
// allocates at most maxAllocFactor × len(frame) + allocSlack bytes; a frame that parses
// re-encodes (header and body) to a frame that parses to the same body bytes.
func FuzzWireRequest(f *testing.F) {
	id := "fuzz"
	for i, r := range seedRequests() {
		f.Add(AppendRequest(nil, r, int32(i), &id)[4:])
	}
	f.Add(header(3, 1, 7, []byte{0, 1, 'c', 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}))
	f.Add(header(3, 9, 7, []byte{0xff, 0xff, 1, 0, 100, 1, 2}))
	f.Add(header(apiVersionsKey, 99, 7, []byte{0, 1, 'c'}))
	f.Add(header(999, 0, 7, nil))
	f.Add([]byte{0x16, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, frame []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		req, err := ParseRequest(frame)
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > uint64(maxAllocFactor*len(frame)+allocSlack) {
			t.Fatalf("allocated %d bytes for a %d-byte frame", d, len(frame))
		}
		if err != nil {
			return
		}
		again := AppendRequest(nil, req.Body, req.Correlation, req.ClientID)
		back, err := ParseRequest(again[4:])
		if err != nil {
			t.Fatalf("re-encoded %s v%d does not parse: %v", req.APIName(), req.Version, err)
		}
		if !bytes.Equal(back.Body.AppendTo(nil), req.Body.AppendTo(nil)) {
			t.Fatalf("%s v%d: body changed across re-encoding", req.APIName(), req.Version)
		}
	})
}

// TestWireDecodeAllocationBounded builds, for every key and version, bodies whose first array
// count (int32 or compact) at each of the first offsets is as large as the remaining bytes
// allow, on a zero background (zeros decode as minimal valid elements, the worst case), and
// checks allocation against maxAllocFactor. It logs the worst ratio seen.
func TestWireDecodeAllocationBounded(t *testing.T) {
	const bodyLen = 8 << 10
	worst, worstName := 0.0, ""
	for _, k := range allKeys() {
		proto := kmsg.RequestForKey(k)
		for v := int16(0); v <= proto.MaxVersion(); v++ {
			body := kmsg.RequestForKey(k)
			body.SetVersion(v)
			hdr := AppendRequest(nil, body, 1, nil)[4:]
			hdr = hdr[:len(hdr)-len(body.AppendTo(nil))]
			for off := 0; off < 24; off++ {
				for _, compact := range []bool{false, true} {
					for _, div := range []int{1, 2, 4, 8} {
						b := make([]byte, bodyLen)
						count := (bodyLen - off - 5) / div
						if compact {
							binary.PutUvarint(b[off:], uint64(count)+1)
						} else {
							binary.BigEndian.PutUint32(b[off:], uint32(count))
						}
						frame := append(append([]byte{}, hdr...), b...)
						var before, after runtime.MemStats
						runtime.ReadMemStats(&before)
						ParseRequest(frame)
						runtime.ReadMemStats(&after)
						ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(frame))
						if ratio > worst {
							worst, worstName = ratio, kmsg.NameForKey(k)+" v"+string(rune('0'+v%10))
						}
						if d := after.TotalAlloc - before.TotalAlloc; d > uint64(maxAllocFactor*len(frame)+allocSlack) {
							t.Fatalf("%s v%d off %d compact %v div %d: allocated %d for %d bytes", kmsg.NameForKey(k), v, off, compact, div, d, len(frame))
						}
					}
				}
			}
		}
	}
	t.Logf("worst allocation: %.1f× the frame (%s)", worst, worstName)
}

// FuzzWireResponse feeds arbitrary response frames to ParseResponse for the request kinds
// peer sends (ApiVersions, Metadata, Fetch, LeaderAndIsr, UpdateMetadata, StopReplica,
// OffsetForLeaderEpoch, ControlledShutdown). The first byte picks the request kind and the
// second its version. Invariants: never panics; allocates at most maxAllocFactor × the frame
// plus allocSlack.
func FuzzWireResponse(f *testing.F) {
	keys := []int16{18, 3, 1, 4, 6, 5, 23, 7}
	for i, k := range keys {
		req := kmsg.RequestForKey(k)
		for _, v := range []int16{0, req.MaxVersion()} {
			req.SetVersion(v)
			resp := req.ResponseKind()
			frame := AppendResponse(nil, &Request{Header: Header{Key: k, Version: v, Correlation: 1, HeaderVersion: headerVersionOf(req)}}, resp)
			f.Add(append([]byte{byte(i), byte(v)}, frame[4:]...))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 2 {
			return
		}
		req := kmsg.RequestForKey(keys[int(in[0])%len(keys)])
		req.SetVersion(int16(in[1]) % (req.MaxVersion() + 1))
		frame := in[2:]
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ParseResponse(frame, req, 1)
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > uint64(maxAllocFactor*len(frame)+allocSlack) {
			t.Fatalf("allocated %d bytes for a %d-byte frame", d, len(frame))
		}
	})
}
