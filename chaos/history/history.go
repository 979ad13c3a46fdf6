package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Op types.
const (
	Invoke = "invoke"
	OK     = "ok"
	Fail   = "fail"
	Info   = "info"
)

// Op functions; see the package comment.
const (
	Send      = "send"
	Poll      = "poll"
	Commit    = "commit"
	Assign    = "assign"
	Revoke    = "revoke"
	FinalRead = "final-read"
	FinalEnd  = "final-end"
	Fault     = "fault"
	Recovered = "recovered"
	Drained   = "drained"

	Txn          = "txn"
	TxnSend      = "txn-send"
	TxnRead      = "txn-read"
	TxnFinalRead = "txn-final-read"
	TxnFinalEnd  = "txn-final-end"
)

// Op is one line of the history.
type Op struct {
	Time       int64  `json:"t"` // unix nanoseconds
	Process    string `json:"proc"`
	Type       string `json:"type"`
	F          string `json:"f"`
	Value      string `json:"value,omitempty"`
	Seq        int64  `json:"seq,omitempty"`
	Partition  int32  `json:"p"`
	Offset     int64  `json:"o"`
	Idempotent bool   `json:"idem,omitempty"`
	Client     string `json:"client,omitempty"` // "kgo" or "sarama"
	TxnID      string `json:"txn,omitempty"`    // txn-send: the transaction (a txn op's Value)
	Source     string `json:"src,omitempty"`    // txn-send: the input record "<p>/<o>" it transforms
	Err        string `json:"err,omitempty"`
}

// At returns the op's time.
func (o Op) At() time.Time { return time.Unix(0, o.Time) }

// Writer appends ops to a JSON-lines file and keeps them in memory for the
// checker. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	buf *bufio.Writer
	ops []Op
	err error
}

// Create opens path for writing, truncating it.
func Create(path string) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return &Writer{f: f, buf: bufio.NewWriterSize(f, 1<<16)}, nil
}

// Add stamps op with the current time when its Time is zero and appends it.
func (w *Writer) Add(op Op) {
	if op.Time == 0 {
		op.Time = time.Now().UnixNano()
	}
	b, err := json.Marshal(op)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ops = append(w.ops, op)
	if err == nil {
		b = append(b, '\n')
		_, err = w.buf.Write(b)
	}
	if err != nil && w.err == nil {
		w.err = err
	}
}

// Ops returns a copy of every op added so far.
func (w *Writer) Ops() []Op {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Op(nil), w.ops...)
}

// Close flushes and closes the file and returns the first write error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.buf.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// Read decodes a JSON-lines history. A line longer than 1 MiB or one that
// is not an Op is an error naming its line number.
func Read(r io.Reader) ([]Op, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var ops []Op
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var op Op
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			return nil, fmt.Errorf("history: line %d: %w", n, err)
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return ops, nil
}
