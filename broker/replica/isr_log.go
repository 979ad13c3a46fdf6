package replica

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// replicaProgress is what the leader knew of one replica when the ISR
// changed, for the log line.
type replicaProgress struct {
	id          int32
	endOffset   int64         // -1: no fetch since this broker became leader
	sinceCaught time.Duration // -1: never caught up
}

// String renders Kafka's "(brokerId: 3, endOffset: 42, ...)" form.
func (rp replicaProgress) String() string {
	since := "never"
	if rp.sinceCaught >= 0 {
		since = rp.sinceCaught.Round(time.Millisecond).String() + " ago"
	}
	return fmt.Sprintf("(brokerId: %d, endOffset: %d, lastCaughtUp: %s)", rp.id, rp.endOffset, since)
}

// progressOfLocked returns the leader's view of replicas ids. The caller
// holds mu; this takes progress.
func (p *Partition) progressOfLocked(ids []int32) []replicaProgress {
	now := p.m.cfg.Now()
	p.progress.Lock()
	defer p.progress.Unlock()
	out := make([]replicaProgress, 0, len(ids))
	for _, id := range ids {
		rp := replicaProgress{id: id, endOffset: -1, sinceCaught: -1}
		if fs, ok := p.mu.followers[id]; ok {
			rp.endOffset = fs.leo
			if !fs.lastCaughtUp.IsZero() {
				rp.sinceCaught = max(now.Sub(fs.lastCaughtUp), 0)
			}
		}
		out = append(out, rp)
	}
	return out
}

// logIsrChangeLocked writes the INFO line of an ISR change in Kafka's words
// ("Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 10,
// endOffset: 12). Out of sync replicas: (brokerId: 3, endOffset: 7,
// lastCaughtUp: 31.2s ago).") with the same facts as fields. The caller
// holds mu.
func (p *Partition) logIsrChangeLocked(newISR, changed []int32, shrink bool) {
	hw, leo := p.mu.data.HighWatermark(), p.mu.data.LogEndOffset()
	progress := p.progressOfLocked(changed)
	parts := make([]string, len(progress))
	for i, rp := range progress {
		parts[i] = rp.String()
	}
	verb, which, reason := "Expanding", "Caught-up replicas",
		"caught up to the high watermark and the leader epoch start"
	if shrink {
		verb, which = "Shrinking", "Out of sync replicas"
		reason = "not caught up to the leader's log end for replica.lag.time.max.ms (" +
			p.m.cfg.ReplicaLagTimeMax.String() + ")"
	}
	fields := logrus.Fields{
		"old_isr": p.mu.isr, "new_isr": newISR, "leader_epoch": p.mu.leaderEpoch,
		"high_watermark": hw, "log_end_offset": leo, "reason": reason,
	}
	if shrink {
		fields["out_of_sync_replicas"] = changed
	} else {
		fields["caught_up_replicas"] = changed
	}
	p.log.WithFields(fields).Info(fmt.Sprintf("%s ISR from %s to %s. Leader: (highWatermark: %d, endOffset: %d). %s: %s.",
		verb, joinIDs(p.mu.isr), joinIDs(newISR), hw, leo, which, strings.Join(parts, ", ")))
}

// joinIDs renders broker ids as Kafka does in ISR lines: "1,2,3".
func joinIDs(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(int64(id), 10))
	}
	return b.String()
}
