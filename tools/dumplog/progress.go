package dumplog

// A progress line for long-running tools (kafka-dump-log of big segments).

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress prints a one-line progress indicator on stderr, only when stderr
// is a terminal and stdout is not (on a terminal the output itself shows
// progress; in pipes, files and tests nothing extra is written).
type progress struct {
	w     io.Writer
	last  time.Time
	shown bool
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newProgress returns a progress printer; the first line appears after half
// a second, so short runs never show one.
func newProgress(stderr, stdout io.Writer) *progress {
	if !isTerminal(stderr) || isTerminal(stdout) {
		return &progress{}
	}
	return &progress{w: stderr, last: time.Now()}
}

func (p *progress) update(what string, done, total int64) {
	if p.w == nil || total <= 0 || time.Since(p.last) < 500*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.shown = true
	fmt.Fprintf(p.w, "\r%s: %d of %d bytes (%d%%)\x1b[K", what, done, total, done*100/total)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
