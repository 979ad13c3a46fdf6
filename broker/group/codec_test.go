package group

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Golden bytes written out field by field from Kafka 2.8's schemas
// (OffsetCommitKey/Value, GroupMetadataKey/Value).
func TestGroupCodecGoldenKeys(t *testing.T) {
	offKey := unhex(t, `0001 0001 67 0001 74 00000003`) // v1, "g", "t", 3
	if got := EncodeOffsetKey("g", "t", 3); !bytes.Equal(got, offKey) {
		t.Fatalf("offset key = %x, want %x", got, offKey)
	}
	grpKey := unhex(t, `0002 0002 6731`) // v2, "g1"
	if got := EncodeGroupKey("g1"); !bytes.Equal(got, grpKey) {
		t.Fatalf("group key = %x, want %x", got, grpKey)
	}
	cases := []struct {
		in   string
		want Key
	}{
		{`0000 0001 67 0001 74 00000003`, Key{Version: 0, Group: "g", IsOffset: true, Topic: "t", Partition: 3}},
		{`0001 0001 67 0001 74 00000003`, Key{Version: 1, Group: "g", IsOffset: true, Topic: "t", Partition: 3}},
		{`0002 0002 6731`, Key{Version: 2, Group: "g1"}},
	}
	for _, c := range cases {
		got, err := DecodeKey(unhex(t, c.in))
		if err != nil || got != c.want {
			t.Fatalf("DecodeKey(%s) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `00`, `0003 0001 67`, `0001 0001 67 0001`, `0002 ffff`, `0002 0005 67`} {
		if _, err := DecodeKey(unhex(t, bad)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("DecodeKey(%q) err = %v, want ErrCorrupt", bad, err)
		}
	}
}

func TestGroupCodecGoldenOffsetValues(t *testing.T) {
	cases := []struct {
		name  string
		bytes string
		v     OffsetValue
		write bool // Samsa writes this version for v
	}{
		{"v0", `0000 000000000000002a 0002 6d64 0000000000000064`,
			OffsetValue{Offset: 42, LeaderEpoch: -1, Metadata: "md", CommitTimestamp: 100, ExpireTimestamp: -1}, false},
		{"v1", `0001 000000000000002a 0002 6d64 0000000000000064 00000000000000c8`,
			OffsetValue{Offset: 42, LeaderEpoch: -1, Metadata: "md", CommitTimestamp: 100, ExpireTimestamp: 200}, true},
		{"v2", `0002 000000000000002a 0000 0000000000000064`,
			OffsetValue{Offset: 42, LeaderEpoch: -1, CommitTimestamp: 100, ExpireTimestamp: -1}, false},
		{"v3", `0003 000000000000002a 00000007 0002 6d64 0000000000000064`,
			OffsetValue{Offset: 42, LeaderEpoch: 7, Metadata: "md", CommitTimestamp: 100, ExpireTimestamp: -1}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := unhex(t, c.bytes)
			got, err := DecodeOffsetValue(raw)
			if err != nil || got != c.v {
				t.Fatalf("decode = %+v, %v; want %+v", got, err, c.v)
			}
			if c.write {
				if enc := EncodeOffsetValue(c.v); !bytes.Equal(enc, raw) {
					t.Fatalf("encode = %x, want %x", enc, raw)
				}
			}
			for i := 0; i < len(raw); i++ {
				if _, err := DecodeOffsetValue(raw[:i]); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("truncated to %d: err = %v", i, err)
				}
			}
		})
	}
	if _, err := DecodeOffsetValue(unhex(t, `0004 000000000000002a`)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("v4 err = %v", err)
	}
}

func TestGroupCodecGoldenGroupValues(t *testing.T) {
	v3 := GroupValue{
		Version: 3, ProtocolType: "consumer", Generation: 5, Protocol: "range", Leader: "m1",
		CurrentStateTimestamp: 1000,
		Members: []MemberValue{{MemberID: "m1", GroupInstanceID: "i1", ClientID: "c", ClientHost: "/h",
			RebalanceTimeoutMs: 300, SessionTimeoutMs: 100, Subscription: []byte{1}, Assignment: []byte{2, 3}}},
	}
	v3hex := `0003 0008 636f6e73756d6572 00000005 0005 72616e6765 0002 6d31 00000000000003e8
		00000001 0002 6d31 0002 6931 0001 63 0002 2f68 0000012c 00000064 00000001 01 00000002 0203`
	raw := unhex(t, v3hex)
	if enc := EncodeGroupValue(v3); !bytes.Equal(enc, raw) {
		t.Fatalf("encode v3 = %x\nwant       %x", enc, raw)
	}
	cases := []struct {
		name, bytes string
		want        GroupValue
	}{
		{"v3", v3hex, v3},
		{"v0", `0000 0008 636f6e73756d6572 00000001 ffff ffff 00000001 0002 6d31 0001 63 0002 2f68 00000064 00000000 00000000`,
			GroupValue{Version: 0, ProtocolType: "consumer", Generation: 1, CurrentStateTimestamp: -1,
				Members: []MemberValue{{MemberID: "m1", ClientID: "c", ClientHost: "/h", RebalanceTimeoutMs: 100,
					SessionTimeoutMs: 100, Subscription: []byte{}, Assignment: []byte{}}}}},
		{"v1", `0001 0000 00000002 0001 78 ffff 00000001 0002 6d31 0001 63 0002 2f68 0000012c 00000064 00000000 00000000`,
			GroupValue{Version: 1, Generation: 2, Protocol: "x", CurrentStateTimestamp: -1,
				Members: []MemberValue{{MemberID: "m1", ClientID: "c", ClientHost: "/h", RebalanceTimeoutMs: 300,
					SessionTimeoutMs: 100, Subscription: []byte{}, Assignment: []byte{}}}}},
		{"v2 empty", `0002 0008 636f6e73756d6572 00000003 ffff ffff 0000000000000010 00000000`,
			GroupValue{Version: 2, ProtocolType: "consumer", Generation: 3, CurrentStateTimestamp: 16}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := unhex(t, c.bytes)
			got, err := DecodeGroupValue(raw)
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("decode = %+v, %v\nwant %+v", got, err, c.want)
			}
			for i := 0; i < len(raw); i++ {
				if _, err := DecodeGroupValue(raw[:i]); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("truncated to %d: err = %v", i, err)
				}
			}
		})
	}
	// A member count far beyond the bytes present must fail before allocating.
	if _, err := DecodeGroupValue(unhex(t, `0003 0000 00000000 ffff ffff 0000000000000000 7fffffff`)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge member count err = %v", err)
	}
}

// FuzzGroupOffsetsCodec checks that no key or value bytes panic the
// decoders and that whatever decodes re-encodes to something that decodes
// to the same value.
func FuzzGroupOffsetsCodec(f *testing.F) {
	f.Add(EncodeOffsetKey("g", "t", 3))
	f.Add(EncodeGroupKey("group"))
	f.Add(EncodeOffsetValue(OffsetValue{Offset: 1, LeaderEpoch: 2, Metadata: "m", CommitTimestamp: 3, ExpireTimestamp: -1}))
	f.Add(EncodeOffsetValue(OffsetValue{Offset: 1, Metadata: "m", CommitTimestamp: 3, ExpireTimestamp: 9}))
	f.Add(EncodeGroupValue(GroupValue{ProtocolType: "consumer", Generation: 1, Protocol: "range", Leader: "a",
		Members: []MemberValue{{MemberID: "a", ClientID: "c", ClientHost: "h", Subscription: []byte{0, 1}, Assignment: []byte{2}}}}))
	f.Fuzz(func(t *testing.T, p []byte) {
		if k, err := DecodeKey(p); err == nil {
			var enc []byte
			if k.IsOffset {
				enc = EncodeOffsetKey(k.Group, k.Topic, k.Partition)
			} else {
				enc = EncodeGroupKey(k.Group)
			}
			k2, err := DecodeKey(enc)
			k.Version, k2.Version = 0, 0
			if err != nil || k2 != k {
				t.Fatalf("key round trip: %+v -> %+v, %v", k, k2, err)
			}
		}
		if v, err := DecodeOffsetValue(p); err == nil {
			if v.ExpireTimestamp < -1 {
				v.ExpireTimestamp = -1 // negative expiries other than -1 re-encode as "none"
			}
			v2, err := DecodeOffsetValue(EncodeOffsetValue(v))
			if err != nil {
				t.Fatalf("offset value round trip: %v", err)
			}
			if v.ExpireTimestamp >= 0 {
				v.LeaderEpoch = -1 // v1 has no leader epoch
			}
			if v2 != v {
				t.Fatalf("offset value round trip: %+v -> %+v", v, v2)
			}
		}
		if v, err := DecodeGroupValue(p); err == nil {
			v2, err := DecodeGroupValue(EncodeGroupValue(v))
			if err != nil || v2.Generation != v.Generation || len(v2.Members) != len(v.Members) || v2.Protocol != v.Protocol {
				t.Fatalf("group value round trip: %+v -> %+v, %v", v, v2, err)
			}
		}
	})
}
