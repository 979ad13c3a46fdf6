package broker

import (
	"context"
	"fmt"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestAPIErrorCodeContextEnds: a handler whose context ended (the
// connection closed or the broker is stopping) answers a retriable
// REQUEST_TIMED_OUT, quietly; only errors errorCode does not know become
// UNKNOWN_SERVER_ERROR with a WARN line.
func TestAPIErrorCodeContextEnds(t *testing.T) {
	logger, hook := test.NewNullLogger()
	b := &Broker{log: logger.WithField("component", "broker")}
	for _, err := range []error{context.Canceled, context.DeadlineExceeded, fmt.Errorf("wait for acks: %w", context.Canceled)} {
		if got := b.errorCode(err); got != kerr.RequestTimedOut.Code {
			t.Errorf("errorCode(%v) = %d, want REQUEST_TIMED_OUT", err, got)
		}
	}
	if n := len(hook.AllEntries()); n != 0 {
		t.Fatalf("%d log lines for context errors, want none", n)
	}
	if got := b.errorCode(fmt.Errorf("something new")); got != kerr.UnknownServerError.Code {
		t.Fatalf("unknown error mapped to %d", got)
	}
	if e := hook.LastEntry(); e == nil || e.Level != logrus.WarnLevel {
		t.Fatalf("unknown error not logged at WARN: %+v", e)
	}
}

// TestAPIErrorCodeTable: every sentinel of errorCodes, wrapped as handlers
// wrap them, maps to its row's code (no row is shadowed by an earlier one
// that matches the same error), without a log line; a Kafka error passes
// through unchanged.
func TestAPIErrorCodeTable(t *testing.T) {
	logger, hook := test.NewNullLogger()
	b := &Broker{log: logger.WithField("component", "broker")}
	n := 0
	for _, row := range errorCodes {
		for _, target := range row.errs {
			n++
			err := fmt.Errorf("handler: %w", target)
			if got := b.errorCode(err); got != row.code.Code {
				t.Errorf("errorCode(%v) = %d, want %s (%d)", target, got, row.code.Message, row.code.Code)
			}
		}
	}
	if n < 50 {
		t.Fatalf("errorCodes maps only %d errors", n)
	}
	if got := b.errorCode(fmt.Errorf("x: %w", kerr.ThrottlingQuotaExceeded)); got != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("kerr error mapped to %d", got)
	}
	if len(hook.AllEntries()) != 0 {
		t.Fatalf("mapped errors logged: %v", hook.AllEntries())
	}
}
