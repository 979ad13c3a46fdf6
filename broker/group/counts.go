package group

// Counts are the coordinator's sizes, Kafka's GroupMetadataManager gauges
// (NumGroups, NumOffsets, NumGroups<State>). Dead groups (deleted or
// expired, on their way out) are not counted.
type Counts struct {
	Groups  int // groups this broker coordinates
	Offsets int // committed offsets held for them
	// Groups per state.
	Empty, PreparingRebalance, CompletingRebalance, Stable int
}

// Counts returns the current counts. It reads only the groups' published
// snapshots (never waits for a group goroutine); a count may lag a
// request being served by at most that request.
func (c *Coordinator) Counts() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n Counts
	for _, ps := range c.mu.partitions {
		for _, g := range ps.groups {
			s := g.snapshot.Load()
			switch s.state {
			case Dead:
				continue
			case Empty:
				n.Empty++
			case PreparingRebalance:
				n.PreparingRebalance++
			case CompletingRebalance:
				n.CompletingRebalance++
			case Stable:
				n.Stable++
			}
			n.Groups++
			n.Offsets += int(g.offsetCount.Load())
		}
	}
	return n
}

// publishCounts stores the group's offset count for Counts; it runs on the
// group goroutine after every event (and after restore).
func (g *group) publishCounts() {
	g.offsetCount.Store(int64(len(g.offsets)))
}
