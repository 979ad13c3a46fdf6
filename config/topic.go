package config

import (
	"errors"
	"fmt"
	"reflect"
)

// Topic is the effective configuration of one topic (Kafka's LogConfig):
// broker defaults with the topic's overrides applied. One field per key of
// TopicKeys; the comment names the key. A Topic is immutable once built and
// safe for concurrent reads.
type Topic struct {
	CleanupPolicy                        []string // cleanup.policy
	CompressionType                      string   // compression.type
	DeleteRetentionMs                    int64    // delete.retention.ms
	FileDeleteDelayMs                    int64    // file.delete.delay.ms
	FlushMessages                        int64    // flush.messages
	FlushMs                              int64    // flush.ms
	FollowerReplicationThrottledReplicas []string // follower.replication.throttled.replicas
	IndexIntervalBytes                   int32    // index.interval.bytes
	LeaderReplicationThrottledReplicas   []string // leader.replication.throttled.replicas
	MaxCompactionLagMs                   int64    // max.compaction.lag.ms
	MaxMessageBytes                      int32    // max.message.bytes
	MessageDownconversionEnable          bool     // message.downconversion.enable
	MessageFormatVersion                 string   // message.format.version
	MessageTimestampDifferenceMaxMs      int64    // message.timestamp.difference.max.ms
	MessageTimestampType                 string   // message.timestamp.type
	MinCleanableDirtyRatio               float64  // min.cleanable.dirty.ratio
	MinCompactionLagMs                   int64    // min.compaction.lag.ms
	MinInsyncReplicas                    int32    // min.insync.replicas
	Preallocate                          bool     // preallocate
	RetentionBytes                       int64    // retention.bytes
	RetentionMs                          int64    // retention.ms
	SegmentBytes                         int32    // segment.bytes
	SegmentIndexBytes                    int32    // segment.index.bytes
	SegmentJitterMs                      int64    // segment.jitter.ms
	SegmentMs                            int64    // segment.ms
	UncleanLeaderElectionEnable          bool     // unclean.leader.election.enable

	// overrides holds the topic-level values given; immutable after build.
	overrides map[string]string
}

// ErrUnknownTopicConfig is wrapped by the error for a topic config name that
// is not in TopicKeys. Kafka answers CreateTopics and AlterConfigs with
// INVALID_CONFIG ("Unknown topic config name: x") in that case.
var ErrUnknownTopicConfig = errors.New("config: unknown topic config name")

// TopicFromOverrides returns the configuration of a topic whose
// /config/topics/<t> overrides are overrides, on a broker configured by
// broker (nil means Defaults()). Keys not overridden take the broker's value
// (Key.Synonym). Every problem is reported in one errors.Join error: unknown
// names wrap ErrUnknownTopicConfig, bad values are *KeyError. Any error from
// it means INVALID_CONFIG on the wire. overrides is not retained.
func TopicFromOverrides(broker *Broker, overrides map[string]string) (*Topic, error) {
	if broker == nil {
		broker = Defaults()
	}
	t := &Topic{overrides: make(map[string]string, len(overrides))}
	var errs []error
	for _, name := range sortedKeys(overrides) {
		if _, ok := findKey(TopicKeys, name); !ok {
			errs = append(errs, fmt.Errorf("%w: %s", ErrUnknownTopicConfig, name))
			continue
		}
		t.overrides[name] = overrides[name]
	}
	dst := reflect.ValueOf(t).Elem()
	for _, k := range TopicKeys {
		if raw, ok := overrides[k.Name]; ok {
			v, err := parseValue(k.Type, raw)
			if err == nil && k.Valid != nil {
				err = k.Valid.Check(v)
			}
			if err != nil {
				errs = append(errs, &KeyError{Key: k.Name, Value: raw, Reason: err.Error()})
				continue
			}
			setField(dst.FieldByName(k.Field), v)
			continue
		}
		setField(dst.FieldByName(k.Field), brokerDefault(broker, k))
	}
	if len(errs) == 0 && t.MinCompactionLagMs > t.MaxCompactionLagMs {
		errs = append(errs, fmt.Errorf("config: conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", t.MinCompactionLagMs, t.MaxCompactionLagMs))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// ValidateTopicOverrides checks topic overrides as CreateTopics and
// AlterConfigs must (names and values), reporting every problem at once.
func ValidateTopicOverrides(overrides map[string]string) error {
	_, err := TopicFromOverrides(nil, overrides)
	return err
}

// Overrides returns a copy of the topic-level values the Topic was built
// with.
func (t *Topic) Overrides() map[string]string {
	out := make(map[string]string, len(t.overrides))
	for k, v := range t.overrides {
		out[k] = v
	}
	return out
}

// Value returns the effective value of the topic key name in properties
// syntax and whether it is a topic override. ok is false when name is not a
// topic key.
func (t *Topic) Value(name string) (value string, override bool, ok bool) {
	k, found := findKey(TopicKeys, name)
	if !found {
		return "", false, false
	}
	_, override = t.overrides[name]
	return formatValue(fieldValue(reflect.ValueOf(t).Elem().FieldByName(k.Field))), override, true
}

// brokerDefault returns the value topic key k takes from broker when the
// topic does not override it.
func brokerDefault(b *Broker, k Key) any {
	switch k.Synonym {
	case "":
		v, _ := parseValue(k.Type, k.Default)
		return v
	case "log.retention.ms":
		return b.LogRetentionMs()
	case "log.roll.ms":
		return b.LogRollMs()
	case "log.roll.jitter.ms":
		return b.LogRollJitterMs()
	case "log.flush.interval.ms":
		return b.LogFlushIntervalMs()
	}
	bk, _ := findKey(BrokerKeys, k.Synonym)
	v := fieldValue(reflect.ValueOf(b).Elem().FieldByName(bk.Field))
	if s, ok := v.([]string); ok {
		return append([]string(nil), s...)
	}
	return v
}
