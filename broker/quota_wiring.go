package broker

import (
	"strings"
	"time"

	metrics "github.com/rcrowley/go-metrics"

	"samsa/broker/quota"
	"samsa/config"
	"samsa/zkutil"
)

// Client quota enforcement, wiring side (Kafka 2.8's ClientQuotaManager for
// producer_byte_rate and consumer_byte_rate): the configured entities come
// from /config/users and /config/clients, loaded when the /config/changes
// listener starts and updated on each users/ or clients/ notification
// (quotaConfigHandler in config_changes.go), so a change from AlterClientQuotas or kafka-configs
// --zookeeper applies without restart. Requests are throttled in
// quota_serve.go. Until a byte-rate quota exists the request path pays one
// atomic load (quota.Manager.AnyEnabled).

// Quota keys the broker enforces, per quota kind.
const (
	quotaProducerByteRate = "producer_byte_rate"
	quotaConsumerByteRate = "consumer_byte_rate"
)

// Quota metric names, as Kafka's quota sensors name them
// (kafka.server:type=Produce|Fetch,user=..,client-id=.. with the
// attributes byte-rate and throttle-time); the user and client-id tags are
// left out when empty, as Kafka's JMX names leave them out.
const (
	metricQuotaByteRate     = "byte-rate"
	metricQuotaThrottleTime = "throttle-time"
)

// newQuotaManager returns the broker's quota manager (quota.window.num
// samples of quota.window.size.seconds; the static quota.producer.default
// and quota.consumer.default below every dynamic entity), registering each
// sensor's byte-rate and throttle-time gauges in the registry while it
// lives.
func newQuotaManager(cfg *config.Broker, opts Options) *quota.Manager {
	reg := opts.Registry
	return quota.NewManager(quota.Options{
		Config: quota.Config{Samples: int(cfg.QuotaWindowNum), Window: time.Duration(cfg.QuotaWindowSizeSeconds) * time.Second},
		Now:    opts.Now,
		StaticClientQuota: map[quota.Kind]float64{
			quota.Produce: float64(cfg.QuotaProducerDefault),
			quota.Fetch:   float64(cfg.QuotaConsumerDefault),
		},
		SensorAdded: func(k quota.Kind, t quota.Tags, s *quota.Sensor) {
			rate := quotaMetricName(k, metricQuotaByteRate, t)
			thr := quotaMetricName(k, metricQuotaThrottleTime, t)
			reg.Unregister(rate)
			reg.Unregister(thr)
			_ = reg.Register(rate, metrics.NewFunctionalGaugeFloat64(s.ByteRate))
			_ = reg.Register(thr, metrics.NewFunctionalGaugeFloat64(s.ThrottleTime))
		},
		SensorRemoved: func(k quota.Kind, t quota.Tags) {
			reg.Unregister(quotaMetricName(k, metricQuotaByteRate, t))
			reg.Unregister(quotaMetricName(k, metricQuotaThrottleTime, t))
		},
	})
}

// quotaMetricName is the registry name of one sensor's metric. Tag values
// are sanitized (URL-encoded) so client ids cannot break the name's syntax.
func quotaMetricName(k quota.Kind, attr string, t quota.Tags) string {
	n := "kafka.server:type=" + k.String() + ",name=" + attr
	if t.User != "" {
		n += ",user=" + t.User
	}
	if t.Client != "" {
		n += ",client-id=" + sanitize(t.Client)
	}
	return n
}

// quotaKindKeys pairs each quota kind with its config key.
var quotaKindKeys = [...]struct {
	kind quota.Kind
	key  string
}{{quota.Produce, quotaProducerByteRate}, {quota.Fetch, quotaConsumerByteRate}}

// toQuotaEntity converts a ZooKeeper quota entity (names desanitized, nil
// the default) to the quota package's (user sanitized, client raw).
func toQuotaEntity(e quotaEntity) quota.Entity {
	q := quota.Entity{HasUser: e.hasUser, HasClient: e.hasClient}
	if e.hasUser {
		if e.user == nil {
			q.DefaultUser = true
		} else {
			q.User = sanitize(*e.user)
		}
	}
	if e.hasClient {
		if e.client == nil {
			q.DefaultClient = true
		} else {
			q.Client = *e.client
		}
	}
	return q
}

// loadClientQuotas reads every user and client-id entity and replaces the
// enforced byte-rate quotas with theirs (Kafka's DynamicConfigManager start).
func (b *Broker) loadClientQuotas() error {
	entities, err := b.allQuotaEntities()
	if err != nil {
		return err
	}
	tables := [len(quotaKindKeys)]quota.Table{}
	for i := range tables {
		tables[i] = quota.Table{}
	}
	for _, e := range entities {
		values, err := b.quotaValues(e)
		if err != nil {
			return err
		}
		for i, kk := range quotaKindKeys {
			if v, ok := values[kk.key]; ok {
				tables[i][toQuotaEntity(e)] = v
			}
		}
	}
	for i, kk := range quotaKindKeys {
		b.quotas.SetQuotas(kk.kind, tables[i])
	}
	b.log.WithField("entities", len(entities)).Info("loaded client quotas")
	return nil
}

// parseQuotaEntityPath parses a config change's entity path: clients/<c>,
// users/<u> or users/<u>/clients/<c> (ZooKeeper names); ok is false for
// anything else.
func parseQuotaEntityPath(path string) (quotaEntity, bool) {
	parts := strings.Split(path, "/")
	switch {
	case len(parts) == 2 && parts[0] == zkutil.ConfigTypeClient && parts[1] != "":
		return quotaEntity{hasClient: true, client: fromZKName(parts[1])}, true
	case len(parts) == 2 && parts[0] == zkutil.ConfigTypeUser && parts[1] != "":
		return quotaEntity{hasUser: true, user: fromZKName(parts[1])}, true
	case len(parts) == 4 && parts[0] == zkutil.ConfigTypeUser && parts[2] == zkutil.ConfigTypeClient &&
		parts[1] != "" && parts[3] != "":
		return quotaEntity{hasUser: true, user: fromZKName(parts[1]), hasClient: true, client: fromZKName(parts[3])}, true
	}
	return quotaEntity{}, false
}

// applyQuotaChange re-reads one entity named by a config change and
// updates the enforced quotas of both kinds (Kafka's QuotaConfigHandler:
// a key absent from the entity's config removes that quota).
func (b *Broker) applyQuotaChange(path string) error {
	e, ok := parseQuotaEntityPath(path)
	if !ok {
		return nil
	}
	values, err := b.quotaValues(e)
	if err != nil {
		return err
	}
	qe := toQuotaEntity(e)
	for _, kk := range quotaKindKeys {
		old := b.quotas.Quotas(kk.kind)
		v, set := values[kk.key]
		if cur, had := old[qe]; had == set && cur == v {
			continue
		}
		t := make(quota.Table, len(old)+1)
		for k, q := range old {
			t[k] = q
		}
		if set {
			t[qe] = v
		} else {
			delete(t, qe)
		}
		b.quotas.SetQuotas(kk.kind, t)
	}
	b.log.WithField("entity", path).Info("applied client quota change")
	return nil
}
