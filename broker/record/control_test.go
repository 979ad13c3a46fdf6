package record

import (
	"errors"
	"testing"
)

func TestRecordEndTxnMarker(t *testing.T) {
	h := NewBuildHeader(42, 1600000000000)
	h.ProducerID, h.ProducerEpoch, h.PartitionLeaderEpoch = 9, 1, 3
	for _, commit := range []bool{true, false} {
		b, err := BuildEndTxnMarker(h, EndTxnMarker{Commit: commit, CoordinatorEpoch: 17})
		if err != nil {
			t.Fatal(err)
		}
		if !b.IsControl() || !b.IsTransactional() || b.BaseSequence() != NoSequence || b.ProducerID() != 9 ||
			b.NumRecords() != 1 || b.LastOffset() != 42 {
			t.Fatalf("marker batch: %s", b)
		}
		if err := b.Validate(Limits{Deep: true}); err != nil {
			t.Fatal(err)
		}
		recs, err := b.Records(0)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseEndTxnMarker(recs[0].Key, recs[0].Value)
		if err != nil || m.Commit != commit || m.CoordinatorEpoch != 17 {
			t.Fatalf("ParseEndTxnMarker = %+v, %v", m, err)
		}
	}
	if _, err := ParseEndTxnMarker([]byte{0, 0, 0, 2}, []byte{0, 0, 0, 0, 0, 1}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("leader change as marker: %v", err)
	}
	if _, err := ParseControlKey([]byte{0}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("short key: %v", err)
	}
}
