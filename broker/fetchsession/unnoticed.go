package fetchsession

// Unnoticed changes: which of a sweep's answers name a missing notice.
//
// A change is visible to a read before its notice runs: a leader append
// publishes the new log end inside the log, and Fetch.Notify (reaching
// Cache.Changed) runs only once the append returns; a follower fetch moves
// the high watermark inside its read and notifies after it. A sweep that
// reads the partition in between answers a change whose notice is a few
// microseconds (on a loaded machine, milliseconds) away. Counting it at
// once made Stats.Unnoticed and the WARN line report missing notices that
// were only late (seed 4 of the chaos run logged one such line). So a
// sweep's answer with no notice only makes the partition a suspect; a
// notice for it (noticeLocked) clears that, and a suspect still standing
// noticeGrace later, judged by the session's next Finish, is counted and
// logged. A change whose notice is missing for good is counted as before,
// one Finish after the grace; one that a later, unrelated notice of the
// same partition covers within the grace is not, which is right for what
// the count is for: that change did not stay unanswered.

import (
	"time"

	"samsa/kafka"
)

// noticeGrace is how long after a sweep answered a change with no notice
// the notice may still come (it runs right after the change is complete;
// the grace covers a notifying goroutine delayed by the scheduler).
const noticeGrace = time.Second

// suspect is a partition a sweep answered although no notice had marked
// it, and what changed.
type suspect struct {
	c    *cached
	at   time.Time
	what string
}

// suspectLocked records that a sweep at now answered c's change what
// with no notice; s.mu held.
func (s *session) suspectLocked(c *cached, now time.Time, what string) {
	if c.suspect {
		return // still waiting since an earlier sweep
	}
	c.suspect = true
	s.mu.suspects = append(s.mu.suspects, suspect{c: c, at: now, what: what})
}

// confirmSuspectsLocked returns the suspects that no notice cleared within
// noticeGrace of now, and drops them and the cleared or forgotten ones
// from the list; s.mu held.
func (s *session) confirmSuspectsLocked(now time.Time) []unnoticedChange {
	if len(s.mu.suspects) == 0 {
		return nil
	}
	var out []unnoticedChange
	keep := s.mu.suspects[:0]
	for _, p := range s.mu.suspects {
		switch {
		case !p.c.suspect || s.mu.parts[p.c.TP] != p.c:
			// Noticed late, or forgotten since.
		case now.Sub(p.at) >= noticeGrace:
			p.c.suspect = false
			out = append(out, unnoticedChange{tp: p.c.TP, what: p.what})
		default:
			keep = append(keep, p)
		}
	}
	clear(s.mu.suspects[len(keep):])
	s.mu.suspects = keep
	return out
}

// unnoticedChange is a partition a sweep answered with no change notice,
// and what its answer changed.
type unnoticedChange struct {
	tp   kafka.TopicPartition
	what string
}
