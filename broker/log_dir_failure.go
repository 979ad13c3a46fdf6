package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// fatalShutdownTimeout bounds the shutdown a broker starts on itself when
// it can no longer serve (Options.OnFatal unset).
const fatalShutdownTimeout = 60 * time.Second

// Log dir event notification retries: the controller learns of the failed
// dir only from it, so a broker that cannot write it stops instead (the
// controller then moves its partitions as for any lost broker).
const (
	logDirEventAttempts = 30
	logDirEventBackoff  = time.Second
	logDirEventPoll     = 50 * time.Millisecond
)

// logDirOffline is the storage.Manager's OnDirOffline hook (KIP-112, as
// Kafka 2.8's ReplicaManager.handleLogDirFailure and
// LogManager.handleLogDirFailure).
//
// With other log dirs still online the broker goes on serving them: the
// partitions whose logs are in the failed dir go offline here
// (stopServingLogDir: no fetching or leading, KAFKA_STORAGE_ERROR for every
// request naming them), then the broker writes a log dir event
// notification (/log_dir_event_notification) with its id. The controller
// answers it with a LeaderAndIsr for every partition of this broker; the
// offline ones answer KAFKA_STORAGE_ERROR, which makes the controller treat
// those replicas as offline: it moves their leadership to another in-sync
// replica and shrinks their ISR. They stay offline until the broker
// restarts; a dir that then fails to load is handled the same way once
// the replica manager exists (checkLogDirsOnline, catchUpLogDirFailures).
//
// When the last dir fails the broker cannot lead or follow anything, yet
// its registration would keep the controller from moving its partitions:
// Kafka halts it ("Shutdown broker because all log dirs have failed").
// Samsa stops through Options.OnFatal (the kafka-server-start command
// shuts down and exits with status 1) or, without one, with an ordered
// Shutdown, whose controlled shutdown moves leadership at once rather than
// after the session timeout.
//
// It runs on the goroutine that hit the disk error, possibly under a
// log's lock, so the work happens on a goroutine of its own.
func (b *Broker) logDirOffline(dir string, err error, online int) {
	fields := logrus.Fields{"dir": dir, "online_dirs": online}
	if online > 0 {
		b.log.WithError(err).WithFields(fields).Error("log dir offline; serving the other log dirs")
		go func() {
			b.stopServingLogDir(dir)
			b.notifyLogDirFailure(dir)
		}()
		return
	}
	b.log.WithError(err).WithFields(fields).Error("last log dir offline; shutting the broker down")
	b.fatal(fmt.Errorf("broker: log dir %s is offline (%d still online): %w", dir, online, err))
}

// fatal stops the broker on a goroutine of its own: Options.OnFatal, or an
// ordered Shutdown without one.
func (b *Broker) fatal(cause error) {
	go func() {
		if b.opts.OnFatal != nil {
			b.opts.OnFatal(cause)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), fatalShutdownTimeout)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			b.log.WithError(err).Warn("shutdown after a fatal error did not complete cleanly")
		}
	}()
}

// stopServingLogDir takes the partitions whose logs are in the failed dir
// offline on this broker (Kafka's ReplicaManager.handleLogDirFailure): no
// more fetching or leading, KAFKA_STORAGE_ERROR for every request naming
// them. The group coordinator resigns the __consumer_offsets partitions
// among them (their groups move with the partitions' leadership). Partitions
// in other dirs are untouched. It returns the partitions taken offline.
func (b *Broker) stopServingLogDir(dir string) []kafka.TopicPartition {
	tps := b.replicas.HandleLogDirFailure(dir)
	if b.groups != nil {
		for _, tp := range tps {
			if tp.Topic == consumerOffsetsTopic {
				b.groups.Resign(tp.Partition, -1)
			}
		}
	}
	b.log.WithFields(logrus.Fields{"dir": dir, "offline_partitions": len(tps)}).
		Warn("stopped serving the replicas in a failed log dir")
	return tps
}

// catchUpLogDirFailures handles the log dirs that failed to load or failed before the replica
// manager's creation, when the storage hook ignored them (replicasUp unset), as Kafka's
// LogDirFailureHandler handles the dirs that failed at start: the replica manager records
// them offline (it hosts nothing of them yet) and the log dir event notification is written,
// so the controller asks again about this broker's replicas (a notification written before
// this broker registers is ignored; registering has the controller ask anyway). A dir
// failing while this runs may be handled twice, which is harmless: its partitions are already
// offline the second time, and the controller reads a second notification the same way.
func (b *Broker) catchUpLogDirFailures() {
	offline := b.logs.OfflineDirs()
	online := len(b.logs.Dirs()) - len(offline)
	for dir, err := range offline {
		b.logDirOffline(dir, err, online)
	}
}

// notifyLogDirFailure writes the log dir event notification for this
// broker (Kafka's zkClient.propagateLogDirEvent), retrying a bounded number
// of times while ZooKeeper is unreachable. If it never succeeds the broker
// stops (fatal): otherwise the controller would keep the offline replicas
// as leaders. A broker that is shutting down, or has no ZooKeeper client
// (tests), does not write it.
func (b *Broker) notifyLogDirFailure(dir string) {
	if b.zk == nil {
		return
	}
	var err error
	for attempt := 0; attempt < logDirEventAttempts; attempt++ {
		if b.stopping.Load() {
			return
		}
		if err = b.zk.WriteLogDirEventNotification(b.ID()); err == nil {
			b.log.WithField("dir", dir).Info("log dir event notification written for the controller")
			return
		}
		b.log.WithError(err).WithField("attempt", attempt+1).Warn("writing the log dir event notification failed; retrying")
		// The pause ends early when the broker starts shutting down.
		for waited := time.Duration(0); waited < logDirEventBackoff && !b.stopping.Load(); waited += logDirEventPoll {
			time.Sleep(logDirEventPoll)
		}
	}
	if !b.stopping.Load() {
		b.fatal(fmt.Errorf("broker: log dir %s is offline and the controller could not be told: %w", dir, err))
	}
}

// checkLogDirsOnline fails the start only when no log dir is online
// (storage.Manager.Load already fails when every dir failed to load; a
// dir may also fail between Load and this check). A dir that failed to
// load does not stop the start (Kafka 2.8, KIP-112): the broker serves
// the others. The failed dir stays offline in the storage.Manager, so it
// gets no new log, and nothing of it is served: its partitions are not
// known yet, but the controller's LeaderAndIsr names them without IsNew,
// and logProvider.GetOrCreateLog refuses to create a missing log for such
// a replica while a dir is offline, so they answer KAFKA_STORAGE_ERROR and
// go offline here instead of coming back empty in a healthy dir. Start
// then handles the failed dirs like any log dir failure
// (catchUpLogDirFailures), writing the log dir event notification.
func (b *Broker) checkLogDirsOnline() error {
	offline := b.logs.OfflineDirs()
	dirs := slices.Sorted(maps.Keys(offline))
	if len(offline) < len(b.logs.Dirs()) {
		for _, dir := range dirs {
			b.log.WithError(offline[dir]).WithField("dir", dir).
				Error("log dir failed to load; starting with the other log dirs (its replicas stay offline here)")
		}
		return nil
	}
	errs := make([]error, 0, len(dirs))
	for _, dir := range dirs {
		errs = append(errs, fmt.Errorf("%s: %w", dir, offline[dir]))
	}
	return fmt.Errorf("broker: none of the log dirs could be loaded (fix them or remove them from log.dirs): %w", errors.Join(errs...))
}
