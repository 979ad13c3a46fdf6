package dumplog

// kafka-dump-log for aborted-transaction indexes ("<base>.txnindex"), as
// Kafka 2.8's DumpLogSegments.dumpTxnIndex prints them: one line per entry,
// "version: V producerId: P firstOffset: F lastOffset: L lastStableOffset: S".
//
// The file is Kafka's TransactionIndex: no header, 34-byte big-endian
// entries {version int16, producer_id int64, first_offset int64,
// last_offset int64, last_stable_offset int64}. The tools may not import
// broker/storage (tools/lint), so this is a small reader of its own.

import (
	"encoding/binary"
	"fmt"

	"samsa/tools/internal/tool"
)

const txnIndexEntryBytes = 34

func (st *dumpState) dumpTxnIndex(file string) error {
	data, err := readIndexFile(file)
	if err != nil {
		return err
	}
	n := len(data) / txnIndexEntryBytes
	for i := 0; i < n; i++ {
		e := data[i*txnIndexEntryBytes:]
		fmt.Fprintf(st.out, "version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n",
			int16(binary.BigEndian.Uint16(e)), int64(binary.BigEndian.Uint64(e[2:])),
			int64(binary.BigEndian.Uint64(e[10:])), int64(binary.BigEndian.Uint64(e[18:])),
			int64(binary.BigEndian.Uint64(e[26:])))
	}
	if rest := len(data) % txnIndexEntryBytes; rest != 0 {
		// Kafka's TransactionIndex iterator fails on a partial entry.
		return tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptRecordException", Msg: fmt.Sprintf("Found %d bytes at the end of %s, less than an entry of %d bytes", rest, absPath(file), txnIndexEntryBytes)}
	}
	return nil
}
