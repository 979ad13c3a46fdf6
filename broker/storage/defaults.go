package storage

import (
	"io"
	"time"

	"github.com/sirupsen/logrus"
)

// defaultDeps fills in the dependencies an options struct left nil: the
// real file system, the wall clock and a logger that discards.
func defaultDeps(fsys *FS, now *func() time.Time, log *logrus.FieldLogger) {
	if *fsys == nil {
		*fsys = OSFS{}
	}
	if *now == nil {
		*now = time.Now
	}
	if *log == nil {
		*log = discardLogger()
	}
}

// discardLogger is the logger of a caller that passed none.
func discardLogger() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}
