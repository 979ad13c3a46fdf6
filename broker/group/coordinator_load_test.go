package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/broker/record"
)

// appendRaw writes records (key, value; nil value = tombstone) to
// partition p as one batch, as an older broker would have.
func (e *env) appendRaw(p int32, codec record.Codec, kvs ...kv) {
	e.t.Helper()
	recs := make([]record.Record, len(kvs))
	for i := range kvs {
		recs[i] = record.Record{OffsetDelta: int32(i), Key: kvs[i].key, Value: kvs[i].value}
	}
	b, err := record.Build(record.NewBuildHeader(0, e.clock.Now().UnixMilli()), recs, codec)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.olog.Append(bg, p, b); err != nil {
		e.t.Fatal(err)
	}
}

// Kafka reads every key and value version it ever wrote: a partition
// written by older brokers (offset values v0-v2, group values v0-v1,
// compressed batches, tombstones, undecodable junk) loads into the groups
// Kafka would have.
func TestGroupLoadOlderFormats(t *testing.T) {
	e := newEnv(t, testConfig())
	const g = "legacy"
	p := e.c.PartitionFor(g)
	v0 := unhex(t, `0000 000000000000002a 0002 6d64 0000000000000064`)             // offset 42
	v1 := unhex(t, `0001 0000000000000007 0000 0000000000000064 7fffffffffffffff`) // offset 7, far expiry
	v2 := unhex(t, `0002 0000000000000009 0000 0000000000000064`)                  // offset 9
	grp := unhex(t, `0001 0008 636f6e73756d6572 00000004 0005 72616e6765 0002 6d31
		00000001 0002 6d31 0001 63 0002 2f68 0000ea60 00002710 00000000 00000002 0203`)
	oldKey := func(topic string, part int32) []byte { // offset key v0
		k := EncodeOffsetKey(g, topic, part)
		k[1] = 0
		return k
	}
	e.appendRaw(p, record.CodecNone,
		kv{key: oldKey("t", 0), value: v0},
		kv{key: []byte{0, 9, 0}, value: []byte("junk")}, // unknown key version: skipped
		kv{key: EncodeOffsetKey(g, "t", 1), value: v1},
	)
	e.appendRaw(p, record.CodecGzip,
		kv{key: EncodeOffsetKey(g, "t", 2), value: v2},
		kv{key: EncodeGroupKey(g), value: grp},
		kv{key: EncodeOffsetKey(g, "gone", 0), value: v2},
	)
	e.appendRaw(p, record.CodecZstd, kv{key: EncodeOffsetKey(g, "gone", 0)}) // tombstone
	e.restart()

	_, offs := e.c.FetchOffsets(bg, g, nil)
	if len(offs) != 3 || offs[0].Offset != 42 || offs[0].Metadata != "md" || offs[1].Offset != 7 || offs[2].Offset != 9 {
		t.Fatalf("offsets = %+v", offs)
	}
	d := e.c.DescribeGroup(bg, g)
	if d.State != "Stable" || d.Protocol != "range" || len(d.Members) != 1 || d.Members[0].MemberID != "m1" ||
		string(d.Members[0].Assignment) != "\x02\x03" {
		t.Fatalf("describe = %+v", d)
	}
	// The loaded member (session 10s) never heartbeats: the group empties.
	e.advance(11*time.Second, g)
	e.waitState(g, "Empty")
	// Generation 4 was loaded, so the empty group is generation 5.
	var gen int32
	e.inspect(g, func(gr *group) { gen = gr.generation })
	if gen != 5 {
		t.Fatalf("generation after the loaded member expired = %d, want 5", gen)
	}
}

// offsets.topic.compression.codec compresses what the coordinator writes;
// the load decompresses it.
func TestGroupCompressedOffsetsReload(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			cfg := testConfig()
			cfg.CompressionCodec = int8(codec)
			e := newEnv(t, cfg)
			codes := e.c.CommitOffsets(bg, CommitRequest{Group: "z", Generation: -1, RetentionMs: -1,
				Offsets: []CommitOffset{commit(5, "t", 0), commit(6, "t", 1)}})
			if codes[0] != 0 || codes[1] != 0 {
				t.Fatalf("commit = %v", codes)
			}
			e.restart()
			if _, offs := e.c.FetchOffsets(bg, "z", nil); len(offs) != 2 || offs[0].Offset != 5 || offs[1].Offset != 6 {
				t.Fatalf("offsets after reload = %+v", offs)
			}
		})
	}
}

// Kafka's onGroupLoaded: a group loaded with more members than
// group.max.size (lowered since) rebalances, and only max.size members
// get back in.
func TestGroupLoadOverCapacity(t *testing.T) {
	e := newEnv(t, testConfig())
	ids, _ := e.joinStable("cap", "c1", "c2", "c3")
	e.c.Shutdown()
	e.olog.Close()
	e.cfg.MaxSize = 2
	e.start()
	e.waitState("cap", "PreparingRebalance")
	j1 := e.joinAsync(consumerJoin("cap", ids[0], "c1"))
	e.waitAwaiting("cap", 1)
	j2 := e.joinAsync(consumerJoin("cap", ids[1], "c2"))
	e.waitAwaiting("cap", 2)
	if r := e.c.JoinGroup(bg, consumerJoin("cap", ids[2], "c3")); r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("third rejoin = %+v", r)
	}
	r1, r2 := recv(t, j1), recv(t, j2)
	if r1.ErrorCode != 0 || r2.ErrorCode != 0 || len(r1.Members)+len(r2.Members) != 2 {
		t.Fatalf("rejoins = %+v / %+v", r1, r2)
	}
}
