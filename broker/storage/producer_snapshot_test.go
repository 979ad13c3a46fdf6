package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"reflect"
	"testing"
)

// The byte layout of Kafka 2.8's producer snapshot, version 1: version,
// CRC-32C of the rest, entry count, then the 46-byte entries.
func TestStorageProducerSnapshotLayout(t *testing.T) {
	e := ProducerEntry{ProducerID: 0x0102030405060708, Epoch: 3, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1,
		LastTimestamp: 0x1122334455,
		Batches:       []ProducerBatch{{FirstSeq: 8, LastSeq: 10, FirstOffset: 98, LastOffset: 100, Timestamp: 0x1122334455}}}
	got := EncodeProducerSnapshot([]ProducerEntry{e})
	body, _ := hex.DecodeString("00000001" + // count
		"0102030405060708" + "0003" + "0000000a" + "0000000000000064" + "00000002" +
		"0000001122334455" + "ffffffff" + "ffffffffffffffff")
	want := binary.BigEndian.AppendUint16(nil, 1)
	want = binary.BigEndian.AppendUint32(want, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	want = append(want, body...)
	if !bytes.Equal(got, want) {
		t.Fatalf("snapshot bytes\n got %x\nwant %x", got, want)
	}
	dec, err := DecodeProducerSnapshot(got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dec, []ProducerEntry{e}) {
		t.Fatalf("decoded %+v, want %+v", dec, e)
	}
	// A producer whose batches are gone (only its epoch is known) has
	// last_offset -1 and reads back without batches.
	bare := ProducerEntry{ProducerID: 5, Epoch: 1, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1, LastTimestamp: 7}
	dec, err = DecodeProducerSnapshot(EncodeProducerSnapshot([]ProducerEntry{bare}))
	if err != nil || len(dec) != 1 || len(dec[0].Batches) != 0 || dec[0].Epoch != 1 || dec[0].LastTimestamp != 7 {
		t.Fatalf("bare entry decoded as %+v, %v", dec, err)
	}
}

func TestStorageProducerSnapshotRejectsDamage(t *testing.T) {
	good := EncodeProducerSnapshot([]ProducerEntry{{ProducerID: 1, CurrentTxnFirstOffset: -1,
		Batches: []ProducerBatch{{LastSeq: 4, LastOffset: 10, FirstOffset: 6}}}})
	cases := map[string][]byte{
		"empty":    nil,
		"short":    good[:7],
		"version":  append([]byte{0, 2}, good[2:]...),
		"crc":      append(append([]byte(nil), good[:len(good)-1]...), good[len(good)-1]^1),
		"trailing": append(append([]byte(nil), good...), 0),
		"count too big": func() []byte {
			b := append([]byte(nil), good...)
			binary.BigEndian.PutUint32(b[6:], 1<<30)
			binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], castagnoli))
			return b
		}(),
	}
	for name, data := range cases {
		if _, err := DecodeProducerSnapshot(data); !errors.Is(err, ErrCorruptProducerSnapshot) || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorruptProducerSnapshot", name, err)
		}
	}
}

// FuzzStorageProducerSnapshot: decoding never panics; whatever decodes
// re-encodes to bytes that decode to the same entries.
func FuzzStorageProducerSnapshot(f *testing.F) {
	f.Add(EncodeProducerSnapshot(nil))
	f.Add(EncodeProducerSnapshot([]ProducerEntry{
		{ProducerID: 1, Epoch: 2, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1, LastTimestamp: 5,
			Batches: []ProducerBatch{{FirstSeq: 2147483646, LastSeq: 1, FirstOffset: 10, LastOffset: 13, Timestamp: 5}}},
		{ProducerID: 9, Epoch: -1, CoordinatorEpoch: 3, CurrentTxnFirstOffset: 44, LastTimestamp: -1},
	}))
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := DecodeProducerSnapshot(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptProducerSnapshot) {
				t.Fatalf("error %v does not wrap ErrCorruptProducerSnapshot", err)
			}
			return
		}
		if len(entries)*producerSnapshotEntrySize > len(data) {
			t.Fatalf("%d entries from %d bytes", len(entries), len(data))
		}
		again, err := DecodeProducerSnapshot(EncodeProducerSnapshot(entries))
		if err != nil {
			t.Fatalf("re-encoded snapshot does not decode: %v", err)
		}
		if !reflect.DeepEqual(again, entries) && !(len(again) == 0 && len(entries) == 0) {
			t.Fatalf("round trip changed entries\n got %+v\nwant %+v", again, entries)
		}
	})
}
