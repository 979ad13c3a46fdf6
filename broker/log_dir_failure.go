package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
)

// fatalShutdownTimeout bounds the shutdown a broker starts on itself when
// it can no longer serve (Options.OnFatal unset).
const fatalShutdownTimeout = 60 * time.Second

// logDirOffline is the storage.Manager's OnDirOffline hook. A broker
// whose every log dir has failed cannot lead or follow anything, yet its
// registration would keep the controller from moving its partitions: Kafka
// halts it (LogManager.handleLogDirFailure: "Shutdown broker because all
// log dirs have failed"). Samsa stops it instead, through Options.OnFatal
// (the kafka-server-start command shuts down and exits with status 1) or,
// without one, with an ordered Shutdown, whose controlled shutdown moves
// leadership at once rather than after the session timeout. A failed dir
// with others still online is only logged: the /log_dir_event_notification
// flow that moves those partitions is not implemented.
//
// It runs on the goroutine that hit the disk error, possibly under a
// log's lock, so the work happens on a goroutine of its own.
func (b *Broker) logDirOffline(dir string, err error, online int) {
	if online > 0 {
		b.log.WithError(err).WithFields(logrus.Fields{"dir": dir, "online_dirs": online}).
			Error("log dir offline; its partitions stay unavailable on this broker until it restarts")
		return
	}
	fatal := fmt.Errorf("broker: every log dir is offline (last: %s: %w)", dir, err)
	b.log.WithError(err).WithField("dir", dir).Error("every log dir is offline; shutting the broker down")
	go func() {
		if b.opts.OnFatal != nil {
			b.opts.OnFatal(fatal)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), fatalShutdownTimeout)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			b.log.WithError(err).Warn("shutdown after the log dirs failed did not complete cleanly")
		}
	}()
}
