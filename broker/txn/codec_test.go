package txn

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"samsa/kafka"
)

// unhex decodes hex written with spaces between fields; on each line the
// first word that is not hex starts a comment.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	var words []string
	for _, line := range strings.Split(s, "\n") {
		for _, w := range strings.Fields(line) {
			if _, err := hex.DecodeString(w); err != nil || strings.HasPrefix(w, "\"") {
				break
			}
			words = append(words, w)
		}
	}
	b, err := hex.DecodeString(strings.Join(words, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The expected bytes below are derived by hand from Kafka 2.8's
// TransactionLogKey.json / TransactionLogValue.json (version 0, every
// field big-endian, strings int16-length, arrays int32-count, a null
// array -1), not from the encoder under test.
func TestTxnCodecKeyGolden(t *testing.T) {
	want := unhex(t, `0000 0005 74786e2d31`) // version 0, "txn-1"
	if got := EncodeKey("txn-1"); !bytes.Equal(got, want) {
		t.Fatalf("key = %x, want %x", got, want)
	}
	id, err := DecodeKey(want)
	if err != nil || id != "txn-1" {
		t.Fatalf("DecodeKey = %q, %v", id, err)
	}
}

func TestTxnCodecValueGoldenOngoing(t *testing.T) {
	v := Value{ProducerID: 1000, ProducerEpoch: 2, TimeoutMs: 60000, State: Ongoing,
		Partitions: []kafka.TopicPartition{{Topic: "foo", Partition: 1}, {Topic: "bar", Partition: 3}, {Topic: "foo", Partition: 0}},
		UpdateMs:   1700000000000, StartMs: 1699999999000}
	want := unhex(t, `
		0000                 version 0
		00000000000003e8     producer_id 1000
		0002                 producer_epoch 2
		0000ea60             transaction_timeout_ms 60000
		01                   transaction_status Ongoing
		00000002             2 topics
		0003 626172          topic bar
		00000001 00000003    partitions 3
		0003 666f6f          topic foo
		00000002 00000000 00000001 partitions 0 1
		0000018bcfe56800     last update 1700000000000
		0000018bcfe56418     start 1699999999000`)
	if got := EncodeValue(v); !bytes.Equal(got, want) {
		t.Fatalf("value =\n%x\nwant\n%x", got, want)
	}
	got, err := DecodeValue(want)
	if err != nil {
		t.Fatal(err)
	}
	wantV := v
	wantV.Partitions = []kafka.TopicPartition{{Topic: "bar", Partition: 3}, {Topic: "foo", Partition: 0}, {Topic: "foo", Partition: 1}}
	if !reflect.DeepEqual(*got, wantV) {
		t.Fatalf("decoded %+v, want %+v", *got, wantV)
	}
}

func TestTxnCodecValueGoldenEmpty(t *testing.T) {
	v := Value{ProducerID: 5, ProducerEpoch: 0, TimeoutMs: 60000, State: Empty, UpdateMs: 1700000000000, StartMs: -1}
	want := unhex(t, `0000 0000000000000005 0000 0000ea60 00 ffffffff 0000018bcfe56800 ffffffffffffffff`)
	if got := EncodeValue(v); !bytes.Equal(got, want) {
		t.Fatalf("value = %x, want %x", got, want)
	}
	// CompleteCommit writes an empty (not null) partition array.
	v.State = CompleteCommit
	want = unhex(t, `0000 0000000000000005 0000 0000ea60 04 00000000 0000018bcfe56800 ffffffffffffffff`)
	if got := EncodeValue(v); !bytes.Equal(got, want) {
		t.Fatalf("value = %x, want %x", got, want)
	}
}

func TestTxnCodecValueRejects(t *testing.T) {
	for name, b := range map[string]string{
		"v1":               `0001 0000000000000005 0000 0000ea60 00 ffffffff 0000018bcfe56800 ffffffffffffffff`,
		"state 9":          `0000 0000000000000005 0000 0000ea60 09 ffffffff 0000018bcfe56800 ffffffffffffffff`,
		"Dead logged":      `0000 0000000000000005 0000 0000ea60 06 ffffffff 0000018bcfe56800 ffffffffffffffff`,
		"Empty with parts": `0000 0000000000000005 0000 0000ea60 00 00000001 0001 61 00000001 00000000 0000018bcfe56800 ffffffffffffffff`,
		"truncated":        `0000 0000000000000005 0000`,
		"huge count":       `0000 0000000000000005 0000 0000ea60 01 7fffffff`,
		"one byte":         `00`,
	} {
		if _, err := DecodeValue(unhex(t, b)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	if v, err := DecodeValue(nil); v != nil || err != nil {
		t.Errorf("tombstone: %v, %v", v, err)
	}
	if _, err := DecodeKey(unhex(t, `0001 0001 61`)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("key v1: %v", err)
	}
}

// FuzzTxnDecode feeds arbitrary key and value bytes to the decoders: they
// must never panic, and what decodes must re-encode to an equal value.
func FuzzTxnDecode(f *testing.F) {
	f.Add(EncodeKey("txn-1"), EncodeValue(Value{ProducerID: 1, State: Ongoing, Partitions: []kafka.TopicPartition{{Topic: "a", Partition: 0}}, StartMs: 1}))
	f.Add([]byte{0, 0, 0xff, 0xff}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		_, _ = DecodeKey(key)
		v, err := DecodeValue(value)
		if err != nil || v == nil {
			return
		}
		again, err := DecodeValue(EncodeValue(*v))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if again.ProducerID != v.ProducerID || again.State != v.State || len(again.Partitions) != len(dedup(v.Partitions)) && len(again.Partitions) != len(v.Partitions) {
			t.Fatalf("round trip changed %+v into %+v", v, again)
		}
	})
}

// dedup returns tps without repeats.
func dedup(tps []kafka.TopicPartition) []kafka.TopicPartition {
	seen := map[kafka.TopicPartition]bool{}
	var out []kafka.TopicPartition
	for _, tp := range tps {
		if !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	return out
}
