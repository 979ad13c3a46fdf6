package broker

import (
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/sirupsen/logrus"

	"samsa/broker/security/pwencoder"
	"samsa/config"
	"samsa/zkutil"
)

// Applying dynamic broker configs (Kafka 2.8's DynamicBrokerConfig): the
// overrides in /config/brokers/<default> and /config/brokers/<id> are read
// at start and again whenever /config/changes announces a change of either
// entity. Precedence is Kafka's: per-broker dynamic > cluster-default
// dynamic > server.properties, merged before the ms > minutes > hours
// resolution. Samsa applies, without restart:
//   - the dynamic keys that supply the topic defaults its logs and replicas
//     use (topicDefaultKeys): every hosted partition's log gets its new
//     effective config (storage.Log.SetConfig through
//     replica.Manager.UpdateTopicConfig), and new logs use it too;
//   - the connection limits (connectionLimitKeys; connection_limits.go):
//     max.connections, max.connections.per.ip,
//     max.connections.per.ip.overrides, max.connection.creation.rate and
//     listener.name.<l>.max.connections /
//     listener.name.<l>.max.connection.creation.rate, given to the running
//     server (new connections obey them; open ones stay but for the least
//     recently active ones above a lowered max.connections, as in Kafka);
//   - the listeners' keystores and truststores (listener.name.<l>.ssl.*;
//     security_wiring.go reloadTLS).
//
// Other dynamic keys (log.cleaner.threads, num.replica.fetchers, the
// thread pools, listeners and advertised.listeners, compression.type,
// unclean.leader.election.enable, log.message.downconversion.enable,
// listener.name.<l>.<mechanism>.sasl.jaas.config, which Kafka 2.8 too
// reads only when a listener is created) are stored and described but not
// applied: Samsa reads those once at start. Keys that are unknown or not
// dynamic are ignored with a warning, as are values that do not validate.

// topicDefaults returns the broker config topic configs default to: the
// static config with the dynamic broker overrides.
func (b *Broker) topicDefaults() *config.Broker {
	if c := b.dynCfg.Load(); c != nil {
		return c
	}
	return b.cfg
}

// topicDefaultKeys are the dynamic broker keys a running broker applies to
// its logs: the defaults of the topic keys that storageConfig and the
// replica manager use (storage.Config, min.insync.replicas).
var topicDefaultKeys = map[string]bool{
	"log.retention.ms": true, "log.retention.bytes": true, "log.segment.bytes": true,
	"log.roll.ms": true, "log.roll.jitter.ms": true, "log.index.size.max.bytes": true,
	"log.index.interval.bytes": true, "log.flush.interval.messages": true, "log.flush.interval.ms": true,
	"log.cleanup.policy": true, "log.cleaner.delete.retention.ms": true, "log.cleaner.min.cleanable.ratio": true,
	"log.cleaner.min.compaction.lag.ms": true, "log.cleaner.max.compaction.lag.ms": true,
	"log.segment.delete.delay.ms": true, "log.message.timestamp.type": true,
	"log.message.timestamp.difference.max.ms": true, "log.preallocate": true,
	"message.max.bytes": true, "min.insync.replicas": true,
}

// connectionLimitKeys are the broker-wide connection limits a running
// broker applies (applyConnectionLimits); the listener ones are
// listener.name.<l>.max.connections and .max.connection.creation.rate.
var connectionLimitKeys = map[string]bool{
	"max.connections": true, "max.connections.per.ip": true,
	"max.connections.per.ip.overrides": true, "max.connection.creation.rate": true,
}

// otherDynamicKeys are Kafka's dynamic broker keys that have no place in
// config.BrokerKeys: the replication throttle rates, which
// replication_throttle.go reads from the same znodes.
var otherDynamicKeys = map[string]bool{
	"leader.replication.throttled.rate":              true,
	"follower.replication.throttled.rate":            true,
	"replica.alter.log.dirs.io.max.bytes.per.second": true,
}

// loadDynamicBrokerConfig reads the dynamic broker overrides, stores the
// effective config and returns the keys whose effective value changed.
func (b *Broker) loadDynamicBrokerConfig() ([]string, error) {
	props := b.cfg.Supplied()
	for _, entity := range []string{defaultBrokerEntity, strconv.Itoa(int(b.ID()))} {
		stored, err := b.zk.GetEntityConfig(zkutil.ConfigTypeBroker, entity)
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return nil, err
		}
		overrides, reencode := b.decodePasswords(entity, stored)
		if len(reencode) > 0 && entity != defaultBrokerEntity {
			b.reencodePasswords(entity, overrides, reencode)
		}
		for _, name := range slices.Sorted(maps.Keys(overrides)) {
			if otherDynamicKeys[name] {
				continue // not in Samsa's key table; read by their own loops
			}
			key, known := brokerKey(name)
			if !known || !key.Dynamic {
				b.log.WithFields(logrus.Fields{"entity": "brokers/" + entity, "key": name}).
					Warn("ignoring dynamic broker config that cannot be updated dynamically")
				continue
			}
			trial := maps.Clone(props)
			trial[name] = overrides[name]
			if err := validateBrokerProps(trial); err != nil {
				b.log.WithError(err).WithFields(logrus.Fields{"entity": "brokers/" + entity, "key": name}).
					Warn("ignoring invalid dynamic broker config")
				continue
			}
			props = trial
		}
	}
	eff, _, err := config.NewBroker(props)
	if err != nil {
		return nil, err
	}
	old := b.topicDefaults()
	var changed []string
	for _, k := range config.BrokerKeys {
		ov, _, _ := old.Value(k.Name)
		nv, _, _ := eff.Value(k.Name)
		if ov != nv {
			changed = append(changed, k.Name)
		}
	}
	b.dynCfg.Store(eff)
	return changed, nil
}

// applyDynamicBrokerConfig reloads the dynamic broker overrides and pushes
// changed topic defaults to every hosted partition.
func (b *Broker) applyDynamicBrokerConfig() {
	changed, err := b.loadDynamicBrokerConfig()
	if err != nil {
		b.log.WithError(err).Warn("reading dynamic broker configs failed")
		return
	}
	b.reloadTLS()
	b.applyConnectionLimits()
	if len(changed) == 0 {
		return
	}
	applied, notApplied := []string{}, []string{}
	for _, k := range changed {
		switch {
		case topicDefaultKeys[k]:
			applied = append(applied, k)
		case !connectionLimitKeys[k]:
			notApplied = append(notApplied, k)
		}
	}
	if len(notApplied) > 0 {
		b.log.WithField("keys", notApplied).Warn("dynamic broker configs stored but not applied by Samsa at run time")
	}
	if len(applied) == 0 {
		return
	}
	topics := map[string]bool{}
	for _, p := range b.replicas.Partitions() {
		topics[p.TopicPartition().Topic] = true
	}
	for _, topic := range slices.Sorted(maps.Keys(topics)) {
		tc, err := b.topics.replicaTopicConfig(topic)
		if err == nil {
			err = b.replicas.UpdateTopicConfig(topic, tc)
		}
		if err != nil {
			b.log.WithError(err).WithField("topic", topic).Warn("applying a dynamic broker config change failed")
		}
	}
	b.log.WithFields(logrus.Fields{"keys": applied, "topics": len(topics)}).Info("applied dynamic broker config change")
}

// reencodePasswords stores again, encrypted with password.encoder.secret,
// the password configs only password.encoder.old.secret decoded (Kafka's
// maybeReEncodePasswords, which runs at start; here at every reload, which
// finds nothing left to do once the znode was rewritten).
func (b *Broker) reencodePasswords(entity string, clear map[string]string, names []string) {
	stored, err := b.zk.GetEntityConfig(zkutil.ConfigTypeBroker, entity)
	if err == nil {
		var enc *pwencoder.Encoder
		if enc, err = b.passwordEncoder(false); err == nil {
			for _, name := range names {
				if stored[name], err = enc.Encode(clear[name]); err != nil {
					break
				}
			}
		}
	}
	if err == nil {
		err = b.zk.SetEntityConfig(zkutil.ConfigTypeBroker, entity, stored)
	}
	if err != nil {
		b.log.WithError(err).WithField("keys", names).Warn("re-encoding dynamic password configs with the new secret failed")
		return
	}
	b.log.WithField("keys", names).Info("dynamic password configs re-encoded with password.encoder.secret")
}
