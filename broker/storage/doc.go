// Package storage is Samsa's "the log" (Kafka's kafka.log package): one
// append-only log per hosted partition, made of segment files with sparse
// offset and time indexes; leader and follower appends; reads as file
// regions sent with sendfile(2); rolling; retention; truncation; flush
// policy; crash recovery; the checkpoint files; the leader-epoch cache;
// log compaction; and the Manager that owns the log dirs.
//
// # Imports
//
// Must never import: net, kmsg requests, zkutil, controller, replica, group,
// server, peer, metadata. It imports only broker/record of Samsa (STYLE
// S1.1); tests may use net for the sendfile path.
//
// # Concurrency
//
//   - Log: appends, truncations, rolls, retention, segment swaps and Close
//     are serialised by Log.mu (STYLE S6.4). LogEndOffset, LogStartOffset,
//     HighWatermark, RecoveryPoint and Read take no lock: they read atomics
//     and a copy-on-write segment list, and only pread bytes below the
//     published end. The published end (logEnd) also carries an immutable
//     view of the places of the active segment's last 16 batches
//     (recent_batches.go): the writer only appends to the array behind a
//     view past its end, and switches to a fresh array on truncation, so a
//     reader can answer offsets near the end from the view with no lock and
//     no read of the file. Flush holds Log.flushMu while it fsyncs, and Log.mu
//     only to snapshot and to publish the recovery point, so fsync never
//     blocks appends (except flush.messages, which fsyncs in the append
//     path as Kafka does).
//   - Manager: all methods are safe concurrently. Manager.mu guards the log
//     map only and is never held during disk I/O (S6.9); Manager.create
//     guards the creations under way and the planned placements (new logs
//     are created concurrently without it, manager_create.go) and is held
//     through a deletion. Load starts, and Close stops
//     and waits for, these goroutines: the delayed-deletion queue, the
//     retention loop, the flusher (flush.ms and segments just rolled), the
//     checkpoint writer and the cleaner threads (Cleaner, cleaner*.go).
//   - Lock order: createSyncs.mu → Manager.create → Manager.mu;
//     Manager.flushBatchMu → Log.flushMu → Log.mu → index locks and
//     LeaderEpochCache.mu → CheckpointFile.mu. A checkpointBatch holds the
//     CheckpointFile.mu of each staged file from its stage to its rename
//     (checkpoint_batch.go), and one flushLogs, which holds the flushMu of
//     each log it flushes until its batch is committed, runs at a time
//     (flushBatchMu). The cleaner takes Log.mu only to
//     swap a cleaned segment in, to read a log's truncation count and to
//     read which producers are active (once per segment group).
//   - The Log calls the Manager while holding Log.mu: OnRoll
//     (Manager.onRoll takes Manager.rollFlush to queue the log for a
//     background flush, then signals the flusher without blocking),
//     OnFailure (Manager.markOffline takes Manager.mu) and OnTruncate
//     (Manager.onTruncate → Cleaner.logTruncated takes Cleaner.mu to abort
//     a pass in progress, then Cleaner.ckptMu to lower the cleaner
//     checkpoint, reading the log list under Manager.mu; see
//     cleaner_checkpoint.go). So Log.mu → Manager.rollFlush, Log.mu →
//     Manager.mu, Log.mu → Cleaner.mu and Log.mu → Cleaner.ckptMu →
//     Manager.mu are part of the lock order, and the Manager and the
//     Cleaner never call a Log method that takes Log.mu while holding
//     Manager.mu, Manager.rollFlush, Cleaner.mu or Cleaner.ckptMu (they
//     copy the log list or the pending set and release the lock first).
//
// # Files
//
// Worked listing of a log dir ("log.dirs" entry) holding partition 0 of
// topic "orders" with two segments (Kafka 2.8 layout, byte-compatible):
//
//	/var/lib/samsa/data/
//	  .kafka_cleanshutdown              present only after a clean shutdown
//	  meta.properties                   broker.id, cluster.id (meta_properties.go)
//	  recovery-point-offset-checkpoint  text: "0\n<n>\n<topic> <partition> <offset>\n..." (checkpoint.go)
//	  replication-offset-checkpoint     same format, high watermarks
//	  log-start-offset-checkpoint       same format, log start offsets (KIP-107)
//	  cleaner-offset-checkpoint         same format, first dirty offsets
//	  orders-0/
//	    00000000000000000000.log        record batches v2, exactly as on the wire
//	    00000000000000000000.index      offset index (created when first needed, see below)
//	    00000000000000000000.timeindex  time index (likewise)
//	    00000000000000368769.log        next segment: base offset 368769
//	    00000000000000368769.index
//	    00000000000000368769.timeindex
//	    00000000000000368769.snapshot   producer state before offset 368769 (producer_snapshot.go)
//	    00000000000000368769.txnindex   aborted transactions whose ABORT marker is in this segment
//	                                    (txn_index.go; only once the segment has one)
//	    leader-epoch-checkpoint         "0\n<n>\n<epoch> <start offset>\n..." (leader_epoch*.go)
//	  orders-1.5f0c...e2-delete/        a DeleteLog interrupted by a crash; removed at Load
//
// Temporary names: "<file>.deleted" (segment waiting file.delete.delay.ms),
// "<base>.log.cleaned" and "<base>.log.swap" (compaction), "<file>.tmp"
// (checkpoint or producer snapshot being written). Load removes .deleted, .cleaned and .tmp
// files and completes .swap files.
//
// leader-epoch-checkpoint is rewritten whole (temp file, fsync, rename,
// directory fsync), but not on every new epoch: as Kafka 3.7 (KAFKA-15046)
// a new epoch lives in memory until the log's next Flush (or Close), which
// writes it before the recovery point moves, and recovery assigns again
// the epochs of the batches past the recovery point (leader_epoch*.go).
// Invariant: the file holds every epoch that starts below the recovery
// point. Truncations of the cache still write it before they return.
//
// A .log file is a sequence of record batches v2 (see broker/record):
//
//	+------------+-------------+---------------------- ... --+
//	| baseOffset | batchLength | epoch, magic=2, crc, ...    |  one batch,
//	|  int64     |  int32      | header (61 bytes in all)    |  12+batchLength
//	+------------+-------------+---------------------- ... --+  bytes
//	| next batch ...
//
// A .index file holds 8-byte big-endian entries, sorted, both fields
// strictly increasing; an entry is added once more than
// index.interval.bytes were appended since the last one, and names the
// last offset of the batch (Kafka 0.11+) and the batch's position:
//
//	+--------------------------------+--------------------------+
//	| int32 offset - segment base    | int32 position in .log   |
//	+--------------------------------+--------------------------+
//
// A .timeindex file holds 12-byte big-endian entries written at the same
// moments when the segment's max timestamp grew (and once more when the
// segment stops being active): the max timestamp so far and the last
// offset of the batch that carried it:
//
//	+--------------------------------+--------------------------------+
//	| int64 timestamp (ms)           | int32 offset - segment base    |
//	+--------------------------------+--------------------------------+
//
// A .txnindex file (Kafka's TransactionIndex) holds 34-byte big-endian
// entries, no header, one per transaction an ABORT marker in this segment
// ended, in marker order (last_offset strictly increasing):
//
//	+---------+-------------+--------------+-------------+--------------------+
//	| int16 0 | int64 pid   | int64 first  | int64 last  | int64 last stable  |
//	| version | producer id | txn's first  | the ABORT   | oldest other open  |
//	|         |             | offset       | marker      | txn, else last + 1 |
//	+---------+-------------+--------------+-------------+--------------------+
//
// It is written on ABORT (leader, follower and replay alike), truncated
// with its segment, renamed and deleted with it, carried into cleaned
// segments, and rebuilt from the log for every segment recovery reads
// again (the producer state is replayed from a snapshot at or below the
// first recovered segment, re-adding the aborted transactions). The last
// stable offset (log_txn.go) is min(first offset of the oldest open or
// not yet replicated transaction, high watermark); read_committed reads
// stop there.
//
// While a segment is active both index files are preallocated (sparse) to
// segment.index.bytes rounded down to whole entries once they exist; they
// are cut to their entries when the segment rolls and when the log closes.
// Loading stops at the first entry that does not follow its predecessor, so
// the zero tail of a preallocated file reads as empty.
//
// # Lazy index files
//
// A new segment creates only its .log: the .index and .timeindex files are
// created when first needed, so a new empty log costs its directory, its
// .log and its checkpoints, about half the file-system operations of
// Kafka's layout (issue 18 point 2: a LeaderAndIsr creating 10,000 logs is
// bound by exactly these operations). The rules, and why:
//
//   - An index file is created when its first entries are written to disk
//     (Flush, a roll, eviction, Close: entries live in memory until then),
//     preallocated if the segment is still active, as it would have been.
//   - A segment holding data always has both files once it rolls or the
//     log closes, even without entries (a segment smaller than
//     index.interval.bytes has none). Kafka 2.8 rebuilds a segment whose
//     .index is missing at every load (Log.loadSegmentFiles: "Could not
//     find offset index file ... rebuilding"), and so does Samsa: without
//     the files a clean restart would re-read such segments. The offset
//     index is created first.
//   - The time index is created whenever the offset index is (Flush
//     creates it when the offset index exists). Kafka 2.8 treats a missing
//     .timeindex next to an existing .index as empty without rebuilding
//     (LogSegment.sanityCheck resizes it to 0), which would lose the
//     segment's largest timestamp for retention.ms and ListOffsets by time;
//     a pair never leaves a Samsa segment that way. (Samsa itself rebuilds
//     any segment holding data with either file missing.)
//   - An empty segment never needs index files: it opens with none, closes
//     with none and a clean or unclean load creates none. Kafka 2.8 opens
//     such a directory too: it logs "Could not find offset index file" at
//     ERROR for the empty segment, "recovers" its zero bytes and creates
//     the files.
//   - Crash guarantees are unchanged: an index is derived data never
//     trusted beyond the .log (indexesConsistent), every segment from the
//     recovery point on is re-read after an unclean stop, and a segment
//     holding data below the recovery point but missing a file (its only
//     entries were never flushed, or a Flush raced an append) is rebuilt
//     at load like any other segment with a missing index.
//   - Truncation, resizing and renames (.deleted, .cleaned, .swap) of an
//     absent file change only memory and the name; deletion ignores a
//     missing file; a closed index never creates its file.
//
// # Index I/O: in-memory mirror with pwrite, not mmap
//
// Kafka memory-maps its indexes. Samsa keeps each index's entries in a Go
// byte slice (binary search without syscalls) and writes new entries to
// the file with one pwrite when the segment is flushed, rolled, truncated
// or closed. Reasons: every file access goes through the FS interface, so
// the error-injecting FS of the tests sees index writes too (an mmap store
// bypasses it, and a failing mmap store is a SIGBUS, not an error); an
// append costs no index syscall, as with mmap; memory use is the entries
// actually written (the preallocated tail costs nothing). When a segment
// stops being active its index entries leave memory; the first lookup in
// it loads them again (until the next retention pass evicts them), so
// memory goes to the active segments and the ones being read, as with
// Kafka's lazy mmaps. An index file holds no open descriptor: the rare
// operations that touch it (flush, roll, truncation, close, a reload after
// eviction) open it, read or write it, and close it, as Kafka closes an
// index file right after mmapping it. So a segment costs one descriptor
// (its .log) and a broker with 10,000 single-segment replicas needs about
// 10,000, not 30,000 (TestStorageIndexesHoldNoDescriptor). Index entries not
// yet written when the process crashes are rebuilt by recovery, which
// re-reads every segment past the recovery point; indexes are derived
// data, and anything before the recovery point was fsynced with its index.
//
// # Durability
//
// See docs/storage.md. In short: an acknowledged append is in the page
// cache, not on disk, unless flush.messages / flush.ms say otherwise (the
// default, like Kafka's, never fsyncs in the append path; replication is
// the durability mechanism). Flush makes every batch below the log end
// offset it started from durable and advances the recovery point; each
// fsync site says what it makes durable. Producer snapshots are written
// to "<name>.tmp", fsynced and renamed (Kafka fsyncs them too); at close
// and load the directory is fsynced at once, at a roll by the roll's
// flush. A failed snapshot never fails the log (it is an optimisation of
// the next load); at close it withholds .kafka_cleanshutdown.
//
// # Recovery
//
// Without .kafka_cleanshutdown in a log dir, every log in it re-reads the
// segments from the one holding its checkpointed recovery point
// (recovery.go, ScanBatches): framing, CRC-32C and offset order are checked
// batch by batch, indexes are rebuilt, and the segment is cut at the first
// bad byte (WARN with segment, position and bytes dropped); segments after
// a cut segment are deleted. Any segment whose index files are missing or
// inconsistent, or which holds data and lacks an index file, or whose tail
// does not parse, is recovered the same way even after a clean shutdown.
package storage
