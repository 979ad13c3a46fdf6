package storage

// offsetMapEntryOverhead estimates the bytes a Go map[string]int64 spends
// per entry beyond the key bytes: the string header (16), the value (8),
// control bytes, the slack of a table kept below its load factor and the
// key allocation's size-class rounding. Measured with Go 1.26 at 1M
// entries: 69 bytes per entry for 8- and 16-byte keys, 101 for 36-byte
// keys, 165 for 100-byte keys (heap after GC). It turns
// log.cleaner.dedupe.buffer.size into a bound on keys held; a table that
// is doubling briefly holds both copies, as any growing hash table does.
const offsetMapEntryOverhead = 72

// offsetMap maps each record key of a log's dirty section to the offset of
// its latest record (Kafka's SkimpyOffsetMap). Unlike Kafka, which stores a
// 16-byte MD5 of each key and so may merge two keys whose hashes collide,
// keys are compared by their bytes; memory is bounded by charging each
// distinct key its length plus offsetMapEntryOverhead against limit.
//
// Owned by one cleaner goroutine; not safe for concurrent use.
type offsetMap struct {
	m      map[string]int64
	used   int64 // bytes charged so far
	limit  int64 // bytes the map may use (this thread's dedupe buffer share × load factor)
	latest int64 // largest offset recorded, -1 when none (Kafka's latestOffset)
}

// newOffsetMap returns an empty map that may use limit bytes.
func newOffsetMap(limit int64) *offsetMap {
	return &offsetMap{m: make(map[string]int64), limit: limit, latest: -1}
}

// reset empties the map for the next log, keeping its allocation.
func (om *offsetMap) reset() {
	clear(om.m)
	om.used = 0
	om.latest = -1
}

// put records that key's latest record is at offset. It returns false,
// recording nothing, when key is new and would not fit in the budget: the
// map is full.
func (om *offsetMap) put(key []byte, offset int64) bool {
	if _, ok := om.m[string(key)]; !ok {
		cost := int64(len(key)) + offsetMapEntryOverhead
		if om.used+cost > om.limit {
			return false
		}
		om.used += cost
	}
	om.m[string(key)] = offset
	om.latest = max(om.latest, offset)
	return true
}

// get returns the latest offset recorded for key, or -1 when none.
func (om *offsetMap) get(key []byte) int64 {
	if off, ok := om.m[string(key)]; ok {
		return off
	}
	return -1
}

// updateLatest raises the latest mapped offset to offset (a batch's last
// offset once all its records were mapped).
func (om *offsetMap) updateLatest(offset int64) { om.latest = max(om.latest, offset) }

// size returns the number of keys held.
func (om *offsetMap) size() int { return len(om.m) }

// utilization is the share of the byte budget in use, for logs and stats.
func (om *offsetMap) utilization() float64 {
	if om.limit <= 0 {
		return 0
	}
	return float64(om.used) / float64(om.limit)
}
