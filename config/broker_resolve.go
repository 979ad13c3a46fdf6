package config

import (
	"fmt"
	"strconv"
	"strings"
)

const (
	msPerMinute = int64(60 * 1000)
	msPerHour   = 60 * msPerMinute
)

// LogDirs returns the data directories: log.dirs split on commas, or log.dir
// when log.dirs is unset.
func (b *Broker) LogDirs() []string {
	raw := b.RawLogDirs
	if raw == "" {
		raw = b.LogDir
	}
	var out []string
	for _, d := range strings.Split(raw, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// LogRetentionMs returns the retention time with Kafka's precedence:
// log.retention.ms, then log.retention.minutes, then log.retention.hours.
// Any negative result is -1 (unlimited).
func (b *Broker) LogRetentionMs() int64 {
	var ms int64
	switch {
	case b.RawLogRetentionMs != nil:
		ms = *b.RawLogRetentionMs
	case b.RawLogRetentionMinutes != nil:
		ms = int64(*b.RawLogRetentionMinutes) * msPerMinute
	default:
		ms = int64(b.LogRetentionHours) * msPerHour
	}
	if ms < 0 {
		return -1
	}
	return ms
}

// LogRollMs returns log.roll.ms, or log.roll.hours in milliseconds.
func (b *Broker) LogRollMs() int64 {
	if b.RawLogRollMs != nil {
		return *b.RawLogRollMs
	}
	return int64(b.LogRollHours) * msPerHour
}

// LogRollJitterMs returns log.roll.jitter.ms, or log.roll.jitter.hours in
// milliseconds.
func (b *Broker) LogRollJitterMs() int64 {
	if b.RawLogRollJitterMs != nil {
		return *b.RawLogRollJitterMs
	}
	return int64(b.LogRollJitterHours) * msPerHour
}

// LogFlushIntervalMs returns log.flush.interval.ms, or
// log.flush.scheduler.interval.ms when it is unset.
func (b *Broker) LogFlushIntervalMs() int64 {
	if b.RawLogFlushIntervalMs != nil {
		return *b.RawLogFlushIntervalMs
	}
	return b.LogFlushSchedulerIntervalMs
}

// validate checks rules that involve several keys (Kafka's
// KafkaConfig.validateValues) and the structured string keys. It returns
// every problem found.
func (b *Broker) validate() []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: "+format, args...))
	}
	if b.BrokerIDGenerationEnable {
		if b.BrokerID < -1 || b.BrokerID > b.ReservedBrokerMaxID {
			fail("broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id (broker.id=%d, reserved.broker.max.id=%d)", b.BrokerID, b.ReservedBrokerMaxID)
		}
	} else if b.BrokerID < 0 {
		fail("broker.id must be greater than or equal to 0 when broker.id.generation.enable is false (broker.id=%d)", b.BrokerID)
	}
	if _, _, err := ParseZKConnect(b.RawZookeeperConnect); err != nil && b.RawZookeeperConnect != "" {
		errs = append(errs, &KeyError{Key: "zookeeper.connect", Value: b.RawZookeeperConnect, Reason: strings.TrimPrefix(err.Error(), "config: ")})
	}
	if r := b.LogRollMs(); r < 1 {
		fail("log.roll.ms must be greater than or equal to 1 (resolved to %d)", r)
	}
	if r := b.LogRetentionMs(); r != -1 && r < 1 {
		fail("log.retention.ms must be unlimited (-1) or, equal or greater than 1 (resolved to %d)", r)
	}
	if len(b.LogDirs()) == 0 {
		fail("log.dirs or log.dir must name at least one directory")
	}
	if b.LogCleanerThreads > 0 && b.LogCleanerDedupeBufferSize/int64(b.LogCleanerThreads) <= 1024*1024 {
		fail("log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread (%d for %d threads)", b.LogCleanerDedupeBufferSize, b.LogCleanerThreads)
	}
	if b.ReplicaFetchWaitMaxMs > b.ReplicaSocketTimeoutMs {
		fail("replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent unnecessary socket timeouts (%d < %d)", b.ReplicaSocketTimeoutMs, b.ReplicaFetchWaitMaxMs)
	}
	if int64(b.ReplicaFetchWaitMaxMs) > b.ReplicaLagTimeMaxMs {
		fail("replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to prevent frequent changes in ISR (%d > %d)", b.ReplicaFetchWaitMaxMs, b.ReplicaLagTimeMaxMs)
	}
	if b.OffsetsCommitRequiredAcks < -1 || b.OffsetsCommitRequiredAcks > b.OffsetsTopicReplicationFactor {
		fail("offsets.commit.required.acks must be greater or equal -1 and less or equal to offsets.topic.replication.factor (%d)", b.OffsetsCommitRequiredAcks)
	}
	if b.GroupMinSessionTimeoutMs > b.GroupMaxSessionTimeoutMs {
		fail("group.min.session.timeout.ms (%d) must not exceed group.max.session.timeout.ms (%d)", b.GroupMinSessionTimeoutMs, b.GroupMaxSessionTimeoutMs)
	}
	if _, err := ParseConnectionOverrides(b.MaxConnectionsPerIPOverrides); err != nil {
		errs = append(errs, &KeyError{Key: "max.connections.per.ip.overrides", Value: b.MaxConnectionsPerIPOverrides, Reason: err.Error()})
	}
	if b.MaxConnectionsPerIP == 0 && b.MaxConnectionsPerIPOverrides == "" {
		fail("max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.")
	}
	errs = append(errs, b.validateListeners()...)
	return errs
}

func (b *Broker) validateListeners() []error {
	var errs []error
	if _, err := parseProtocolMap(b.ListenerSecurityProtocolMap); err != nil {
		return []error{&KeyError{Key: "listener.security.protocol.map", Value: b.ListenerSecurityProtocolMap, Reason: err.Error()}}
	}
	if b.RawListeners != "" {
		if _, err := parseListeners(b.RawListeners, b.ListenerSecurityProtocolMap); err != nil {
			errs = append(errs, &KeyError{Key: "listeners", Value: b.RawListeners, Reason: err.Error()})
		}
	}
	if b.RawAdvertisedListeners != "" {
		ls, err := parseListeners(b.RawAdvertisedListeners, b.ListenerSecurityProtocolMap)
		if err != nil {
			errs = append(errs, &KeyError{Key: "advertised.listeners", Value: b.RawAdvertisedListeners, Reason: err.Error()})
		}
		for _, l := range ls {
			if l.Host == "0.0.0.0" || l.Host == "::" {
				errs = append(errs, &KeyError{Key: "advertised.listeners", Value: b.RawAdvertisedListeners, Reason: "advertised.listeners cannot use the nonroutable meta-address " + l.Host + ". Use a routable IP address"})
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if b.InterBrokerListenerName != "" {
		if _, given := b.supplied["security.inter.broker.protocol"]; given {
			errs = append(errs, fmt.Errorf("config: only one of inter.broker.listener.name and security.inter.broker.protocol should be set"))
		}
	}
	if _, ok := b.InterBrokerListener(); !ok {
		errs = append(errs, fmt.Errorf("config: inter.broker.listener.name must be a listener name defined in advertised.listeners (%s not found)", b.InterBrokerListenerNameResolved()))
	}
	errs = append(errs, b.validateControlPlaneListener()...)
	return errs
}

// ParseConnectionOverrides parses max.connections.per.ip.overrides, a comma
// list of host-or-ip:count (Kafka's KafkaConfig.getMap with integer values).
func ParseConnectionOverrides(s string) (map[string]int32, error) {
	out := map[string]int32{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i := strings.LastIndexByte(part, ':')
		if i <= 0 {
			return nil, fmt.Errorf("entry %q is not host:count", part)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(part[i+1:]), 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("entry %q has no valid count", part)
		}
		out[strings.TrimSpace(part[:i])] = int32(n)
	}
	return out, nil
}
