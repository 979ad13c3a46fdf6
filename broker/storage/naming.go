package storage

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"samsa/kafka"
)

// File-name suffixes in a partition directory (Kafka's Log companion object).
const (
	LogFileSuffix       = ".log"
	IndexFileSuffix     = ".index"
	TimeIndexFileSuffix = ".timeindex"
	DeletedFileSuffix   = ".deleted"
	CleanedFileSuffix   = ".cleaned"
	SwapFileSuffix      = ".swap"
	TmpFileSuffix       = ".tmp"
	// CleanShutdownFile is created in each log dir root after every log in
	// it was flushed and closed; its absence at start means recovery runs.
	CleanShutdownFile = ".kafka_cleanshutdown"
)

// offsetDigits is the width of a segment's base offset in its file names.
const offsetDigits = 20

// ParseTopicPartitionDir splits a partition directory name ("foo-3") into
// its topic and partition. Topics may contain '-', so the last one splits.
func ParseTopicPartitionDir(name string) (kafka.TopicPartition, error) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return kafka.TopicPartition{}, fmt.Errorf("storage: %q is not a <topic>-<partition> directory", name)
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 || name[i+1] == '+' {
		return kafka.TopicPartition{}, fmt.Errorf("storage: %q is not a <topic>-<partition> directory", name)
	}
	if strings.ContainsAny(name[:i], "/\\ ") {
		return kafka.TopicPartition{}, fmt.Errorf("storage: %q is not a <topic>-<partition> directory", name)
	}
	return kafka.TopicPartition{Topic: name[:i], Partition: int32(p)}, nil
}

// filenamePrefixFromOffset is Kafka's Log.filenamePrefixFromOffset: the
// offset in decimal, zero-padded to 20 digits.
func filenamePrefixFromOffset(offset int64) string {
	return fmt.Sprintf("%0*d", offsetDigits, offset)
}

// segmentFileName returns dir/<20-digit base offset><suffix>.
func segmentFileName(dir string, baseOffset int64, suffix string) string {
	return filepath.Join(dir, filenamePrefixFromOffset(baseOffset)+suffix)
}

// parseSegmentFileName returns the base offset and suffix of a segment file
// name such as "00000000000000000042.timeindex" or
// "00000000000000000042.log.deleted". ok is false for other names.
func parseSegmentFileName(name string) (base int64, suffix string, ok bool) {
	if len(name) <= offsetDigits || name[offsetDigits] != '.' {
		return 0, "", false
	}
	for _, c := range name[:offsetDigits] {
		if c < '0' || c > '9' {
			return 0, "", false
		}
	}
	base, err := strconv.ParseInt(name[:offsetDigits], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return base, name[offsetDigits:], true
}
