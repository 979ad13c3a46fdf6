package storage

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"samsa/broker/record"
)

// headerReader returns exactly the headers record.ReadHeaderAt reads, for
// batches smaller and larger than a chunk, headers that straddle a chunk's
// end, forward scans, backward jumps and limits inside a batch; and the same
// error classes at the end of the file and on damaged bytes.
func TestStorageHeaderReaderMatchesReadHeaderAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var file []byte
	var starts []int64
	for len(starts) < 300 {
		starts = append(starts, int64(len(file)))
		value := rng.IntN(120)
		if rng.IntN(8) == 0 {
			value = 3000 + rng.IntN(9000) // larger than a chunk
		}
		file = append(file, testBatch(t, 1+rng.IntN(3), value, 1_700_000_000_000)...)
	}
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OSFS{}.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := int64(len(file))
	check := func(hr *headerReader, pos int64) {
		t.Helper()
		got, gerr := hr.at(pos)
		want, werr := record.ReadHeaderAt(f, pos)
		if got != want || errors.Is(gerr, record.ErrShortBatch) != errors.Is(werr, record.ErrShortBatch) ||
			errors.Is(gerr, record.ErrCorrupt) != errors.Is(werr, record.ErrCorrupt) || (gerr == nil) != (werr == nil) {
			t.Fatalf("at %d: headerReader %+v, %v; ReadHeaderAt %+v, %v", pos, got, gerr, want, werr)
		}
	}
	hr := headerReader{f: f, limit: size}
	defer hr.release()
	for _, p := range starts { // a forward scan
		check(&hr, p)
	}
	check(&hr, size)            // at the end: ErrShortBatch
	for i := 0; i < 2000; i++ { // random jumps and limits
		if rng.IntN(10) == 0 {
			hr.reset(f, starts[rng.IntN(len(starts))]+rng.Int64N(100))
		}
		check(&hr, starts[rng.IntN(len(starts))])
	}
	check(&hr, starts[5]+3) // not a batch start: corrupt or a wild length
	if n := testing.AllocsPerRun(50, func() {
		r := headerReader{f: f, limit: size}
		for _, p := range starts[:40] {
			if _, err := r.at(p); err != nil {
				t.Fatal(err)
			}
		}
		r.release()
	}); n > 0 {
		t.Fatalf("a scan allocates %v times", n)
	}
}
