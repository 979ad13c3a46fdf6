package zkutil

import (
	"bytes"
	"fmt"
	"strconv"
)

// ConsumerRegistration is the data of /consumers/<g>/ids/<id> written by the
// old ZooKeeper consumer.
type ConsumerRegistration struct {
	// Subscription maps topic (or regex for wildcards) → number of streams.
	Subscription map[string]int32
	// Pattern is "static", "white_list" or "black_list".
	Pattern string
	// Timestamp is ms since the epoch.
	Timestamp int64
}

type consumerRegistrationJSON struct {
	Version      *int             `json:"version"`
	Subscription map[string]int32 `json:"subscription"`
	Pattern      *string          `json:"pattern"`
	Timestamp    *flexInt64       `json:"timestamp"`
}

// Encode returns {"version":1,"subscription":{"t":1},"pattern":"static","timestamp":"ms"}.
func (r ConsumerRegistration) Encode() []byte {
	version := 1
	sub := r.Subscription
	if sub == nil {
		sub = map[string]int32{}
	}
	pattern := r.Pattern
	if pattern == "" {
		pattern = "static"
	}
	ts := flexInt64(r.Timestamp)
	return marshal(consumerRegistrationJSON{Version: &version, Subscription: sub, Pattern: &pattern, Timestamp: &ts})
}

// DecodeConsumerRegistration parses /consumers/<g>/ids/<id> data.
func DecodeConsumerRegistration(data []byte) (ConsumerRegistration, error) {
	const kind = "consumer registration"
	var j consumerRegistrationJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return ConsumerRegistration{}, err
	}
	if j.Subscription == nil || j.Pattern == nil {
		return ConsumerRegistration{}, malformed(kind, fmt.Errorf("missing subscription or pattern"))
	}
	r := ConsumerRegistration{Subscription: j.Subscription, Pattern: *j.Pattern}
	if j.Timestamp != nil {
		r.Timestamp = int64(*j.Timestamp)
	}
	return r, nil
}

// EncodeConsumerOffset returns the ASCII decimal offset stored at
// /consumers/<g>/offsets/<t>/<p>.
func EncodeConsumerOffset(offset int64) []byte { return []byte(strconv.FormatInt(offset, 10)) }

// DecodeConsumerOffset parses an ASCII decimal offset.
func DecodeConsumerOffset(data []byte) (int64, error) {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
	if err != nil {
		return 0, malformed("consumer offset", fmt.Errorf("not an integer: %.32q", data))
	}
	return v, nil
}
