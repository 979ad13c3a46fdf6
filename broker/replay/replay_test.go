package replay

import (
	"context"
	"errors"
	"testing"

	"samsa/broker/record"
)

// fakeLog is a partition of batches of two records each, read one batch per call (the
// smallest read ReadFunc allows), with the end fixed or moving.
type fakeLog struct {
	t       *testing.T
	batches []record.Batch
	grow    bool // each read reports an end one batch further (appends during the load)
	reads   int
}

func newFakeLog(t *testing.T, n int) *fakeLog {
	l := &fakeLog{t: t}
	for i := range n {
		b, err := record.Build(record.NewBuildHeader(int64(2*i), 1000),
			[]record.Record{{OffsetDelta: 0, Value: []byte("a")}, {OffsetDelta: 1, Value: []byte("b")}}, record.CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		l.batches = append(l.batches, b)
	}
	return l
}

func (l *fakeLog) end() int64 { return int64(2 * len(l.batches)) }

func (l *fakeLog) read(off int64, _ int) ([]byte, int64, error) {
	l.reads++
	if l.reads > 100 {
		l.t.Fatal("replay did not stop")
	}
	end := l.end()
	if l.grow {
		end += 2 * int64(l.reads-1) // later reads see appends the first did not
	}
	for _, b := range l.batches {
		if b.LastOffset() >= off {
			return b, end, nil
		}
	}
	return nil, end, nil
}

func TestReplayPartitionAppliesEachBatchOnceToTheFirstEnd(t *testing.T) {
	l := newFakeLog(t, 3)
	l.grow = true // the end moves: the replay stops at the first read's end
	var bases, froms []int64
	err := Partition(context.Background(), l.read, 1<<20, func(b record.Batch, from int64) error {
		bases, froms = append(bases, b.BaseOffset()), append(froms, from)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 2, 4}; !equal(bases, want) || !equal(froms, want) {
		t.Fatalf("applied bases %v from %v, want %v from %v", bases, froms, want, want)
	}
	if l.reads != 3 {
		t.Fatalf("%d reads, want 3 (no read once the end is reached)", l.reads)
	}
}

func TestReplayPartitionEmptyLogReadsOnce(t *testing.T) {
	l := newFakeLog(t, 0)
	if err := Partition(context.Background(), l.read, 1, func(record.Batch, int64) error {
		t.Fatal("applied a batch of an empty log")
		return nil
	}); err != nil || l.reads != 1 {
		t.Fatalf("err %v after %d reads, want nil after 1", err, l.reads)
	}
}

func TestReplayPartitionNoProgressIsAnError(t *testing.T) {
	// The log says its end is 10 but has only 4 offsets: the read at 4 returns nothing.
	l := newFakeLog(t, 2)
	read := func(off int64, n int) ([]byte, int64, error) {
		b, _, err := l.read(off, n)
		return b, 10, err
	}
	err := Partition(context.Background(), read, 1, func(record.Batch, int64) error { return nil })
	if !errors.Is(err, ErrNoProgress) {
		t.Fatalf("err = %v, want ErrNoProgress", err)
	}
	// A read that only returns batches below the position does not progress either.
	stale := func(off int64, _ int) ([]byte, int64, error) { return l.batches[0], 10, nil }
	err = Partition(context.Background(), stale, 1, func(record.Batch, int64) error { return nil })
	if !errors.Is(err, ErrNoProgress) {
		t.Fatalf("stale reads: err = %v, want ErrNoProgress", err)
	}
}

func TestReplayPartitionStopsOnErrors(t *testing.T) {
	l := newFakeLog(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := Partition(ctx, l.read, 1, func(record.Batch, int64) error {
		if n++; n == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 2 {
		t.Fatalf("err %v after %d batches, want context.Canceled after 2", err, n)
	}
	errApply := errors.New("bad record")
	if err := Partition(context.Background(), l.read, 1, func(record.Batch, int64) error { return errApply }); !errors.Is(err, errApply) {
		t.Fatalf("err = %v, want the apply error", err)
	}
	errRead := errors.New("not leader")
	read := func(int64, int) ([]byte, int64, error) { return nil, 0, errRead }
	if err := Partition(context.Background(), read, 1, nil); !errors.Is(err, errRead) {
		t.Fatalf("err = %v, want the read error", err)
	}
	garbage := func(int64, int) ([]byte, int64, error) { return []byte{1, 2, 3}, 10, nil }
	if err := Partition(context.Background(), garbage, 1, nil); err == nil {
		t.Fatal("a malformed batch replayed without error")
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
