package fetchsession

// Unnoticed changes: which of a sweep's answers name a missing notice.
//
// A change is visible to a read before its notice runs: a leader append
// publishes the new log end inside the log, and Fetch.Notify (reaching
// Cache.Changed) runs only once the append returns; a follower fetch moves
// the high watermark inside its read and notifies after it. A sweep that
// reads the partition in between answers a change whose notice is a few
// microseconds away. Counting it at once made Stats.Unnoticed and the WARN
// line report missing notices that were only late (seed 4 of the chaos run
// logged one such line). So a sweep's answer with no notice only makes the
// partition a suspect. A notice for it (noticeLocked) before the session's
// next fetch clears that: the late notice runs on the goroutine that made
// the change, a few instructions on, while the next fetch needs the answer
// to reach the client and a new request to come back. A suspect still
// standing when that next fetch arrives (NewContext) is counted and logged.
//
// Not a clock: a grace of a second (the first version) let the high
// watermark notice that follows every append (the followers fetch the
// records and move it) clear a suspect whose append notice was missing for
// good, so the count missed exactly the notices it is for.

import "samsa/kafka"

// suspect is a partition a sweep answered although no notice had marked
// it, and what changed.
type suspect struct {
	c    *cached
	what string
}

// suspectLocked records that a sweep answered c's change what with no
// notice, and reports whether c is a new suspect; s.mu held.
func (s *session) suspectLocked(c *cached, what string) bool {
	if c.suspect || s.mu.gone {
		return false // already a suspect, or the session is removed
	}
	c.suspect = true
	s.mu.suspects = append(s.mu.suspects, suspect{c: c, what: what})
	return true
}

// confirmSuspectsLocked is called when the session's next fetch arrives:
// it returns the suspects no notice cleared since their sweep (forgotten
// partitions are not counted) and empties the list, reporting how many
// entries it held; s.mu held.
func (s *session) confirmSuspectsLocked() (confirmed []unnoticedChange, dropped int) {
	if len(s.mu.suspects) == 0 {
		return nil, 0
	}
	for _, p := range s.mu.suspects {
		if p.c.suspect && s.mu.parts[p.c.TP] == p.c {
			confirmed = append(confirmed, unnoticedChange{tp: p.c.TP, what: p.what})
		}
		p.c.suspect = false
	}
	dropped = len(s.mu.suspects)
	clear(s.mu.suspects)
	s.mu.suspects = s.mu.suspects[:0]
	return confirmed, dropped
}

// dropSuspects forgets s's pending suspects (s is removed from the cache)
// and returns how many there were.
func (s *session) dropSuspects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.gone = true
	n := len(s.mu.suspects)
	for _, p := range s.mu.suspects {
		p.c.suspect = false
	}
	s.mu.suspects = nil
	return n
}

// unnoticedChange is a partition a sweep answered with no change notice,
// and what its answer changed.
type unnoticedChange struct {
	tp   kafka.TopicPartition
	what string
}
