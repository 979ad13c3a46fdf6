package broker

import (
	"time"

	metrics "github.com/rcrowley/go-metrics"

	"samsa/broker/quota"
	"samsa/broker/quota/zkstore"
	"samsa/config"
	"samsa/zkutil"
)

// Client quota enforcement, wiring side (Kafka 2.8's ClientQuotaManager,
// ClientRequestQuotaManager and ControllerMutationQuotaManager): the
// configured entities come from /config/users and /config/clients
// (broker/quota/zkstore), loaded when the /config/changes listener starts
// and updated on each users/ or clients/ notification, so a change from
// AlterClientQuotas or kafka-configs --zookeeper applies without restart.
// Requests are throttled in quota_serve.go, quota_request.go and
// quota_mutation.go. Until a quota exists the request path pays one atomic
// load (quota.Manager.AnyEnabled).

// Quota metric names, as Kafka's quota sensors name them
// (kafka.server:type=Produce|Fetch|Request|ControllerMutation,user=..,
// client-id=.. with the attributes byte-rate, request-time or
// mutation-rate and tokens, and throttle-time); the user and client-id
// tags are left out when empty, as Kafka's JMX names leave them out.
const (
	metricQuotaByteRate          = "byte-rate"
	metricQuotaRequestTime       = "request-time"
	metricQuotaMutationRate      = "mutation-rate"
	metricQuotaTokens            = "tokens"
	metricQuotaThrottleTime      = "throttle-time"
	metricQuotaExemptRequestTime = "kafka.server:type=Request,name=exempt-request-time"
)

// quotaRateMetric is the name of a kind's rate attribute.
func quotaRateMetric(k quota.Kind) string {
	switch k {
	case quota.Request:
		return metricQuotaRequestTime
	case quota.ControllerMutation:
		return metricQuotaMutationRate
	}
	return metricQuotaByteRate
}

// newQuotaManager returns the broker's quota manager (quota.window.num
// samples of quota.window.size.seconds; the static quota.producer.default
// and quota.consumer.default below every dynamic entity), registering each
// sensor's byte-rate and throttle-time gauges in the registry while it
// lives.
func newQuotaManager(cfg *config.Broker, opts Options) *quota.Manager {
	reg := opts.Registry
	m := quota.NewManager(quota.Options{
		Config: quota.Config{Samples: int(cfg.QuotaWindowNum), Window: time.Duration(cfg.QuotaWindowSizeSeconds) * time.Second},
		ControllerConfig: quota.Config{Samples: int(cfg.ControllerQuotaWindowNum),
			Window: time.Duration(cfg.ControllerQuotaWindowSizeSeconds) * time.Second},
		Now: opts.Now,
		StaticClientQuota: map[quota.Kind]float64{
			quota.Produce: float64(cfg.QuotaProducerDefault),
			quota.Fetch:   float64(cfg.QuotaConsumerDefault),
		},
		SensorAdded: func(k quota.Kind, t quota.Tags, s *quota.Sensor) {
			rate := quotaMetricName(k, quotaRateMetric(k), t)
			thr := quotaMetricName(k, metricQuotaThrottleTime, t)
			reg.Unregister(rate)
			reg.Unregister(thr)
			_ = reg.Register(rate, metrics.NewFunctionalGaugeFloat64(s.ByteRate))
			_ = reg.Register(thr, metrics.NewFunctionalGaugeFloat64(s.ThrottleTime))
			if k == quota.ControllerMutation {
				tok := quotaMetricName(k, metricQuotaTokens, t)
				reg.Unregister(tok)
				_ = reg.Register(tok, metrics.NewFunctionalGaugeFloat64(s.Tokens))
			}
		},
		SensorRemoved: func(k quota.Kind, t quota.Tags) {
			reg.Unregister(quotaMetricName(k, quotaRateMetric(k), t))
			reg.Unregister(quotaMetricName(k, metricQuotaThrottleTime, t))
			if k == quota.ControllerMutation {
				reg.Unregister(quotaMetricName(k, metricQuotaTokens, t))
			}
		},
	})
	reg.Unregister(metricQuotaExemptRequestTime)
	_ = reg.Register(metricQuotaExemptRequestTime, metrics.NewFunctionalGaugeFloat64(m.ExemptRequestTime))
	return m
}

// quotaMetricName is the registry name of one sensor's metric. Tag values
// are sanitized (URL-encoded) so client ids cannot break the name's syntax.
func quotaMetricName(k quota.Kind, attr string, t quota.Tags) string {
	n := "kafka.server:type=" + k.String() + ",name=" + attr
	if t.User != "" {
		n += ",user=" + t.User
	}
	if t.Client != "" {
		n += ",client-id=" + zkutil.Sanitize(t.Client)
	}
	return n
}

// loadClientQuotas reads every user and client-id entity and replaces the
// enforced quotas with theirs (Kafka's DynamicConfigManager start).
func (b *Broker) loadClientQuotas() error {
	n, err := zkstore.Load(b.zk, b.quotas)
	if err != nil {
		return err
	}
	b.log.WithField("entities", n).Info("loaded client quotas")
	return nil
}

// applyQuotaChange is the broker's reaction to a /config/changes
// notification naming a users/ or clients/ entity (its entity_path): the
// enforced quotas of every kind follow the entity's config (Kafka's
// QuotaConfigHandler). Paths naming no quota entity are ignored. The
// /config/changes listener calls it; an error means the listener should
// reload everything (loadClientQuotas) on its next wake.
func (b *Broker) applyQuotaChange(entityPath string) error {
	ok, err := zkstore.ApplyChange(b.zk, b.quotas, entityPath)
	if err != nil || !ok {
		return err
	}
	b.log.WithField("entity", entityPath).Info("applied client quota change")
	return nil
}
