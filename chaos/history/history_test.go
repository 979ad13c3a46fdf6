package history

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Add(Op{Process: "p0", Type: Invoke, F: Send, Value: "p0/1", Seq: 1, Idempotent: true})
	w.Add(Op{Process: "p0", Type: OK, F: Send, Value: "p0/1", Seq: 1, Partition: 2, Offset: 7})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, op := range w.Ops() {
		if op.Time == 0 {
			t.Fatalf("op not stamped: %+v", op)
		}
	}
	b, _ := readFile(path)
	buf.Write(b)
	ops, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[1].Offset != 7 || ops[1].Partition != 2 || !ops[0].Idempotent {
		t.Fatalf("round trip: %+v", ops)
	}
}

func TestReadBadLine(t *testing.T) {
	if _, err := Read(bytes.NewBufferString("{\"t\":1}\nnot json\n")); err == nil {
		t.Fatal("want an error for a line that is not JSON")
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte("{\"t\":1,\"proc\":\"p\",\"type\":\"ok\",\"f\":\"send\"}\n"))
	f.Add([]byte("\n\n{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Read(bytes.NewReader(b))
	})
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
