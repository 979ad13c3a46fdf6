package group

import "unicode/utf16"

// javaStringHashCode returns Java's String.hashCode of s: the polynomial
// s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units with int32
// wrap-around. Kafka decodes group ids from UTF-8, so s is first decoded
// the same way (invalid bytes become U+FFFD).
func javaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// kafkaAbs is Kafka's Utils.abs: the absolute value, except that
// math.MinInt32 maps to 0 (Math.abs would leave it negative).
func kafkaAbs(n int32) int32 {
	if n == -1<<31 {
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}

// PartitionFor returns the __consumer_offsets partition that stores
// groupID, and whose leader coordinates it: Kafka's
// Utils.abs(groupId.hashCode) % offsets.topic.num.partitions.
// numPartitions must be positive.
func PartitionFor(groupID string, numPartitions int32) int32 {
	return kafkaAbs(javaStringHashCode(groupID)) % numPartitions
}
