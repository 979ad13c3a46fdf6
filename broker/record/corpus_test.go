package record

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the hand-made seed files under testdata/fuzz")

// TestRecordWriteFuzzCorpus writes the hand-made seed inputs of the fuzz
// targets to testdata/fuzz/<target>/seed-*, in Go's corpus file format:
//
//	go test -run TestRecordWriteFuzzCorpus -update-corpus ./broker/record
//
// Without the flag it only checks that every target has seed files (the
// exact bytes depend on the compression libraries' versions).
func TestRecordWriteFuzzCorpus(t *testing.T) {
	good := fuzzSeeds(t)
	bad := Batch(append([]byte(nil), good[0]...))
	bad[len(bad)-1] ^= 0xff // CRC mismatch
	gzipBomb := mustCompress(t, CodecGzip, make([]byte, 2<<20))
	bombBatch := Batch(append(append([]byte(nil), good[1][:HeaderSize]...), gzipBomb...))
	putBatchLength(bombBatch)
	bombBatch.UpdateCRC()
	v1set, err := ConvertFromV2(good[2], MagicV1, DownConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v0lz4, err := ConvertFromV2(good[3], MagicV0, DownConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bytesSeeds := map[string][][]byte{
		"FuzzRecordBatch":      append(append([][]byte{}, good...), bad, bombBatch, good[0][:40], good[len(good)-1]),
		"FuzzRecordMessageSet": {mustHex(t, goldenV1), mustHex(t, goldenV0), v1set, v0lz4, v1set[:len(v1set)-5]},
		"FuzzRecordConvert":    {good[0], good[4], v1set, v0lz4, bombBatch},
	}
	for target, seeds := range bytesSeeds {
		for _, s := range seeds {
			writeSeed(t, target, "go test fuzz v1\n[]byte("+strconv.Quote(string(s))+")\n")
		}
	}
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		data := mustCompress(t, c, []byte("seed data seed data seed data 0123456789"))
		writeSeed(t, "FuzzRecordDecompress", "go test fuzz v1\nbyte("+strconv.QuoteRune(rune(c))+")\n[]byte("+strconv.Quote(string(data))+")\n")
	}
	writeSeed(t, "FuzzRecordDecompress", "go test fuzz v1\nbyte('\\x04')\n[]byte("+strconv.Quote(string(mustCompress(t, CodecZstd, make([]byte, 4<<20))))+")\n")
}

func writeSeed(t *testing.T, target, content string) {
	t.Helper()
	sum := sha256.Sum256([]byte(content))
	path := filepath.Join("testdata", "fuzz", target, "seed-"+hex.EncodeToString(sum[:8]))
	if !*updateCorpus {
		if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "seed-*")); len(m) == 0 {
			t.Errorf("no seed files for %s (run with -update-corpus)", target)
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
