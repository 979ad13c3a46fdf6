package zkconsumer

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
	"unicode/utf16"

	"samsa/kafka"
)

// topicAndPartition returns Kafka's TopicAndPartition.toString,
// "[topic,partition]", which this package's errors and assignment dumps
// print. The roundrobin assignor orders partitions by the Java hash code of
// this text, so it must not change (kafka.TopicPartition's String is the
// newer "topic-partition" form).
func topicAndPartition(tp kafka.TopicPartition) string {
	return "[" + tp.Topic + "," + strconv.FormatInt(int64(tp.Partition), 10) + "]"
}

// ThreadID names one stream of one consumer, Kafka's ConsumerThreadId. Its
// text form "<consumerId>-<thread>" is what the owner znodes hold and what
// the assignors sort by.
type ThreadID struct {
	Consumer string
	Thread   int
}

// String returns "<consumerId>-<thread>".
func (t ThreadID) String() string { return t.Consumer + "-" + strconv.Itoa(t.Thread) }

// threadLess orders thread ids as Kafka does: by Java String.compareTo of
// their text, so "c-10" sorts before "c-2".
func threadLess(a, b ThreadID) bool { return javaStringLess(a.String(), b.String()) }

// javaStringLess compares two strings as Java's String.compareTo does: by
// UTF-16 code units. For ASCII (topic names, most host names) this is plain
// byte order; it differs from Go's byte order only for characters above
// U+FFFF against U+E000..U+FFFF.
func javaStringLess(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return a < b
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

// javaStringHash is Java's String.hashCode: h = 31*h + c over the UTF-16
// code units, with int32 overflow.
func javaStringHash(s string) int32 {
	var h int32
	if isASCII(s) {
		for i := 0; i < len(s); i++ {
			h = 31*h + int32(s[i])
		}
		return h
	}
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// NewConsumerID builds Kafka's consumer id
// "<group>_<host>-<timestampMs>-<8 hex>". A non-empty consumerID
// (consumer.id, meant for tests) replaces everything after "<group>_".
func NewConsumerID(group, consumerID, host string, now time.Time) (string, error) {
	if consumerID != "" {
		return group + "_" + consumerID, nil
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("zkconsumer: random consumer id: %w", err)
	}
	return fmt.Sprintf("%s_%s-%d-%s", group, host, now.UnixMilli(), hex.EncodeToString(b[:])), nil
}
