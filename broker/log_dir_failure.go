package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/replica"
)

// fatalShutdownTimeout bounds the shutdown a broker starts on itself when
// it can no longer serve (Options.OnFatal unset).
const fatalShutdownTimeout = 60 * time.Second

// logDirOffline is the storage.Manager's OnDirOffline hook. A broker
// whose every log dir has failed cannot lead or follow anything, yet its
// registration would keep the controller from moving its partitions: Kafka
// halts it (LogManager.handleLogDirFailure: "Shutdown broker because all
// log dirs have failed"). With other dirs still online Kafka goes on
// serving them and has the controller move the failed dir's partitions
// (/log_dir_event_notification, LeaderAndIsr answered with
// KAFKA_STORAGE_ERROR); Samsa does not implement that flow, and a leader
// whose log failed would refuse every write while staying leader, so any
// failed log dir stops the broker. It stops through Options.OnFatal (the
// kafka-server-start command shuts down and exits with status 1) or,
// without one, with an ordered Shutdown, whose controlled shutdown moves
// leadership at once rather than after the session timeout.
//
// It runs on the goroutine that hit the disk error, possibly under a
// log's lock, so the work happens on a goroutine of its own.
func (b *Broker) logDirOffline(dir string, err error, online int) {
	fatal := fmt.Errorf("broker: log dir %s is offline (%d still online): %w", dir, online, err)
	b.log.WithError(err).WithFields(logrus.Fields{"dir": dir, "online_dirs": online}).
		Error("log dir offline; shutting the broker down")
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

// checkLogDirsOnline fails the start when a log dir failed to load: the
// storage.Manager would start with the others (Kafka's KIP-112), but
// without the controller's log-dir failure flow a replica whose log sat in
// the failed dir would be recreated empty in another dir, and elected
// leader if it was the last in-sync replica.
func (b *Broker) checkLogDirsOnline() error {
	var errs []error
	for dir, err := range b.logs.OfflineDirs() {
		errs = append(errs, fmt.Errorf("%s: %w", dir, err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("broker: log dirs failed to load (fix them or remove them from log.dirs): %w", errors.Join(errs...))
	}
	return nil
}

// stopServingLogDir takes the partitions whose logs are in the failed dir
// offline on this broker (Kafka's ReplicaManager.handleLogDirFailure): no
// more fetching or leading, KAFKA_STORAGE_ERROR for every request naming
// them. The group coordinator resigns the __consumer_offsets partitions
// among them (their groups move with the partitions' leadership). Partitions
// in other dirs are untouched. It returns the partitions taken offline.
func (b *Broker) stopServingLogDir(dir string) []replica.TopicPartition {
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
