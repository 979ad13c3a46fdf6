package storage

import (
	"errors"
	"io/fs"
	"os"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
)

// completeSwapsLocked finishes compactions interrupted between writing a
// cleaned segment as "<base>.log.swap" and renaming it into place (Kafka's
// Log.completeSwapOperations): the segments the swap replaces (bases in
// [swap base, swap next offset)) are deleted and the swap file becomes
// "<base>.log"; its indexes are rebuilt when it is opened. logs is updated.
func (l *Log) completeSwapsLocked(swaps []int64, logs map[int64]bool) error {
	for _, base := range swaps {
		swapPath := segmentFileName(l.dir, base, LogFileSuffix) + SwapFileSuffix
		f, err := l.fs.OpenFile(swapPath, os.O_RDONLY, 0)
		if err != nil {
			return storageError("open swap segment", err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return storageError("stat swap segment", err)
		}
		next := base
		_, _, err = ScanBatches(f, st.Size(), base, func(_ int64, b record.Batch) error {
			next = b.NextOffset()
			return nil
		})
		f.Close()
		if err != nil {
			return storageError("scan swap segment", err)
		}
		for b := range logs {
			if b >= base && (b < next || b == base) {
				for _, suf := range []string{LogFileSuffix, IndexFileSuffix, TimeIndexFileSuffix, TxnIndexFileSuffix} {
					if err := l.fs.Remove(segmentFileName(l.dir, b, suf)); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return storageError("remove replaced segment", err)
					}
				}
				delete(logs, b)
			}
		}
		if err := l.fs.Rename(swapPath, segmentFileName(l.dir, base, LogFileSuffix)); err != nil {
			return storageError("rename swap segment", err)
		}
		logs[base] = true
		// The cleaned segment's aborted-transaction entries were complete
		// and fsynced before the swap's commit point.
		txnSwap := segmentFileName(l.dir, base, TxnIndexFileSuffix) + SwapFileSuffix
		if err := l.fs.Rename(txnSwap, segmentFileName(l.dir, base, TxnIndexFileSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return storageError("rename swap transaction index", err)
		}
		l.mu.dirDirty = true
		l.logger.WithFields(logrus.Fields{"segment": swapPath, "next_offset": next}).
			Info("storage: completed interrupted segment swap")
	}
	return nil
}
