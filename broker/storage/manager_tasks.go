package storage

import (
	"errors"
	"maps"
	"slices"
	"time"
)

// startBackground starts the Manager's goroutines (S6.8): the delayed-file
// deleter, the retention loop, the flusher (flush.ms and rolled segments),
// the checkpoint writer and the cleaner. Close stops them all.
func (m *Manager) startBackground() {
	m.start(func() { m.delays.run(m.quit) })
	m.start(m.retentionLoop)
	m.start(m.flushLoop)
	m.start(m.checkpointLoop)
	if m.cfg.Cleaner != nil {
		m.cfg.Cleaner.Start(m)
	}
}

// retentionLoop runs DeleteOldSegments on every log each
// RetentionCheckInterval (Kafka's "kafka-log-retention" task).
func (m *Manager) retentionLoop() {
	t := time.NewTicker(m.cfg.RetentionCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-m.quit:
			return
		case <-t.C:
			m.RunRetention()
		}
	}
}

// RunRetention applies retention to every log once and returns the number
// of segments deleted. The retention goroutine calls it periodically.
func (m *Manager) RunRetention() int {
	total := 0
	for _, l := range m.Logs() {
		n, err := l.DeleteOldSegments()
		total += n
		if err != nil && !errors.Is(err, ErrClosed) {
			l.logger.WithError(err).Warn("storage: retention failed")
		}
	}
	if total > 0 {
		m.logger.WithField("segments", total).Debug("storage: retention deleted segments")
	}
	return total
}

// flushLoop flushes logs whose flush.ms is due and logs that rolled a
// segment (so the finished segment becomes durable soon, as Kafka's roll
// schedules a flush).
func (m *Manager) flushLoop() {
	t := time.NewTicker(m.cfg.FlushCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-m.quit:
			return
		case <-m.rolled:
			m.flushRolled()
		case <-t.C:
			m.flushRolled()
			var due []*Log
			for _, l := range m.logsUnordered() {
				if l.flushDue() {
					due = append(due, l)
				}
			}
			m.flushAndLog(due, "storage: flush failed")
		}
	}
}

func (m *Manager) flushRolled() {
	m.rollFlush.Lock()
	pending := m.rollFlush.pending
	m.rollFlush.pending = map[*Log]struct{}{}
	m.rollFlush.Unlock()
	m.flushAndLog(slices.Collect(maps.Keys(pending)), "storage: flush after roll failed")
}

// flushAndLog flushes logs together (flushLogs) and logs each failure
// with msg.
func (m *Manager) flushAndLog(logs []*Log, msg string) {
	if len(logs) == 0 {
		return
	}
	for i, err := range m.flushLogs(logs) {
		if err != nil && !errors.Is(err, ErrClosed) {
			logs[i].logger.WithError(err).Error(msg)
		}
	}
}

// checkpointLoop writes replication-offset-checkpoint every
// HighWatermarkInterval, recovery-point-offset-checkpoint every
// RecoveryPointInterval and log-start-offset-checkpoint every
// LogStartOffsetInterval.
func (m *Manager) checkpointLoop() {
	hw := time.NewTicker(m.cfg.HighWatermarkInterval)
	rp := time.NewTicker(m.cfg.RecoveryPointInterval)
	so := time.NewTicker(m.cfg.LogStartOffsetInterval)
	defer hw.Stop()
	defer rp.Stop()
	defer so.Stop()
	for {
		var doRP, doSO, doHW bool
		select {
		case <-m.quit:
			return
		case <-hw.C:
			doHW = true
		case <-rp.C:
			doRP = true
		case <-so.C:
			doSO = true
		}
		for _, d := range m.cfg.Dirs {
			_ = m.writeCheckpoints(d, doRP, doSO, doHW) // logged inside
		}
	}
}

// CheckpointAll writes every checkpoint file of every log dir now.
func (m *Manager) CheckpointAll() error {
	var err error
	for _, d := range m.cfg.Dirs {
		err = errors.Join(err, m.writeCheckpoints(d, true, true, true))
	}
	return err
}
