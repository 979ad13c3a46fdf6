package storage

import (
	"errors"
	"testing"
)

// TestStorageTxnVerificationGuard: the KIP-890 guard refuses a
// transactional batch that would open a transaction while its producer's
// verification is pending, refused, or spent by a marker, including an
// answer that arrives after the marker; an absent entry checks nothing.
func TestStorageTxnVerificationGuard(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), DefaultConfig(), clock, nil)
	defer l.Close()
	ts := clock.Now().UnixMilli()
	refused := func(what string, b []byte) {
		t.Helper()
		if _, err := l.AppendAsLeader(b, 0); !errors.Is(err, ErrInvalidTxnState) {
			t.Fatalf("%s: append answered %v, want ErrInvalidTxnState", what, err)
		}
	}

	// Verified: the first batch opens the transaction, the next joins it.
	g := l.StartTxnVerification(7, 0)
	refused("answer pending", txnBatch(t, 7, 0, 0, 1, ts))
	l.CompleteTxnVerification(7, g, true)
	appendLeader(t, l, txnBatch(t, 7, 0, 0, 1, ts))
	appendLeader(t, l, txnBatch(t, 7, 0, 1, 1, ts))
	appendMarker(t, l, 7, 0, true, 1)
	// The marker spent the answer: a late batch of the same epoch cannot
	// open a new transaction with it.
	refused("after the marker", txnBatch(t, 7, 0, 2, 1, ts))

	// An answer that arrives after a marker ended its verification is
	// ignored.
	g = l.StartTxnVerification(7, 0)
	appendMarker(t, l, 7, 0, false, 1)
	l.CompleteTxnVerification(7, g, true)
	refused("answer after the marker", txnBatch(t, 7, 0, 2, 1, ts))

	// A negative answer removes the entry; a new verification succeeds.
	g = l.StartTxnVerification(7, 0)
	l.CompleteTxnVerification(7, g, false)
	g = l.StartTxnVerification(7, 0)
	l.CompleteTxnVerification(7, g, true)
	appendLeader(t, l, txnBatch(t, 7, 0, 2, 1, ts))

	// A producer the broker never verified here (verification off, or
	// another leader verified it) is not checked.
	appendLeader(t, l, txnBatch(t, 8, 0, 0, 1, ts))
}
