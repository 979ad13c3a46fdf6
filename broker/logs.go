package broker

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"samsa/broker/replica"
	"samsa/broker/storage"
	"samsa/config"
	"samsa/kafka"
)

// openLogs creates the storage.Manager over log.dirs and loads (recovering
// if needed) every partition found on disk. A log dir that fails to load
// is offline from the start; only none loading fails (checkLogDirsOnline).
func (b *Broker) openLogs() error {
	defaults, err := config.TopicFromOverrides(b.cfg, nil)
	if err != nil {
		return fmt.Errorf("broker: default topic config: %w", err)
	}
	tc := newTopicConfigs(b)
	// ms converts a *.ms setting; Long.MAX_VALUE ("never") and other
	// values beyond a Duration become 0, which the Manager reads as its
	// default.
	ms := func(v int64) time.Duration {
		if v <= 0 || v > math.MaxInt64/int64(time.Millisecond) {
			return 0
		}
		return time.Duration(v) * time.Millisecond
	}
	var cleaner storage.ManagedService
	if b.cfg.LogCleanerEnable {
		cc := storage.DefaultCleanerConfig()
		cc.Threads = int(max(b.cfg.LogCleanerThreads, 1))
		cc.DedupeBufferSize = b.cfg.LogCleanerDedupeBufferSize
		cc.IOBufferLoadFactor = b.cfg.LogCleanerIOBufferLoadFactor
		cc.IOBufferSize = int(b.cfg.LogCleanerIOBufferSize)
		cc.Backoff = ms(b.cfg.LogCleanerBackoffMs)
		if cc.Backoff <= 0 {
			cc.Backoff = storage.DefaultCleanerConfig().Backoff
		}
		cleaner = storage.NewCleaner(storage.CleanerOptions{Config: cc,
			Logger: b.opts.Logger.WithField("broker", b.ID()), Now: b.opts.Now}).ManagedService()
	}
	var serving atomic.Bool
	m, err := storage.NewManager(storage.ManagerConfig{
		Dirs:      b.cfg.LogDirs(),
		Logger:    b.opts.Logger.WithField("broker", b.ID()),
		Now:       b.opts.Now,
		LogConfig: b.logConfig(defaults),
		ConfigFor: func(tp kafka.TopicPartition) storage.Config {
			t, err := tc.get(tp.Topic)
			if err != nil {
				return b.logConfig(defaults)
			}
			return b.logConfig(t)
		},
		RecoveryThreadsPerDataDir: int(b.cfg.NumRecoveryThreadsPerDataDir),
		RetentionCheckInterval:    ms(b.cfg.LogRetentionCheckIntervalMs),
		FlushCheckInterval:        ms(b.cfg.LogFlushSchedulerIntervalMs),
		RecoveryPointInterval:     ms(int64(b.cfg.LogFlushOffsetCheckpointIntervalMs)),
		LogStartOffsetInterval:    ms(int64(b.cfg.LogFlushStartOffsetCheckpointIntervalMs)),
		HighWatermarkInterval:     ms(b.cfg.ReplicaHighWatermarkCheckpointIntervalMs),
		Cleaner:                   cleaner,
		// A moved log start is news for the fetch sessions (fetch_session.go).
		OnLogStartMoved: func(tp kafka.TopicPartition) {
			if b.replicasUp.Load() {
				b.replicas.Fetch.Notify(tp)
				b.replicas.LogStartMoved(tp) // and for the follower fetchers
			}
		},
		OnDirOffline: func(dir string, err error, online int) {
			// Dirs failing while loading or before the replica manager
			// exists are handled by Start (checkLogDirsOnline,
			// catchUpLogDirFailures).
			if serving.Load() && b.replicasUp.Load() {
				b.logDirOffline(dir, err, online)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if err := m.Load(context.Background()); err != nil {
		_ = m.Close()
		return fmt.Errorf("broker: load logs: %w", err)
	}
	b.logs = m
	serving.Store(true)
	if err := b.checkLogDirsOnline(); err != nil {
		_ = m.Close()
		b.logs = nil
		return err
	}
	return nil
}

// closeLogs flushes, checkpoints and closes every log (writing the
// clean-shutdown marker).
func (b *Broker) closeLogs() error {
	if err := b.logs.Close(); err != nil {
		return fmt.Errorf("broker: close logs: %w", err)
	}
	return nil
}

// logProvider adapts the storage.Manager to replica.LogProvider.
func (b *Broker) logProvider() replica.LogProvider { return logProvider{m: b.logs} }

type logProvider struct{ m *storage.Manager }

// GetOrCreateLog opens tp's log, creating it in a healthy log dir when it
// does not exist, except for a replica that is not new (LeaderAndIsr's
// IsNew unset) while a log dir is offline: its log may be in that dir, and
// one created empty elsewhere would be served as this replica (and could
// be elected leader, losing what the failed dir holds). It is refused with
// a storage error (KAFKA_STORAGE_ERROR), which takes the partition offline
// here and has the controller treat the replica as offline (Kafka's
// LogManager.getOrCreateLog: "Can not create log ... because log
// directories ... are offline").
func (p logProvider) GetOrCreateLog(tp kafka.TopicPartition, cfg storage.Config, isNew bool) (*storage.Log, error) {
	if l, ok := p.m.Log(tp); ok {
		return l, nil
	}
	if !isNew {
		if offline := p.m.OfflineDirs(); len(offline) > 0 {
			dirs := slices.Sorted(maps.Keys(offline))
			return nil, fmt.Errorf("broker: cannot create log for %s because log dirs %s are offline: %w",
				tp, strings.Join(dirs, ","), storage.ErrStorage)
		}
	}
	return p.m.GetOrCreateLog(tp, cfg)
}

// PlanNewLogs implements replica.LogPlanner: the logs GetOrCreateLog
// would create are placed in order (storage.Manager.PlanNewLogs), leaving
// out those it refuses while a log dir is offline.
func (p logProvider) PlanNewLogs(logs []replica.NewLog) {
	offline := len(p.m.OfflineDirs()) > 0
	tps := make([]kafka.TopicPartition, 0, len(logs))
	for _, l := range logs {
		if l.IsNew || !offline {
			tps = append(tps, l.TP)
		}
	}
	p.m.PlanNewLogs(tps)
}

func (p logProvider) DeleteLog(tp kafka.TopicPartition) error {
	return p.m.DeleteLog(tp)
}
