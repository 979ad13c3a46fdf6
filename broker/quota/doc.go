// Package quota enforces Kafka 2.8's client quotas (ClientQuotaManager with its
// DefaultQuotaCallback) per user and/or client-id entity: producer_byte_rate and
// consumer_byte_rate (Rate over samples), request_percentage (ClientRequestQuotaManager: the
// same Rate of handler time in percent, the throttle capped at one window, an exempt rate for
// inter-broker requests) and controller_mutation_rate (ControllerMutationQuotaManager,
// KIP-599: a token bucket of samples × window × rate partitions, strict or permissive per
// request, see Mutation). It owns the rate measurement (Kafka's Rate over a SampledStat of quota.window.num
// samples of quota.window.size.seconds each), the throttle time formula, the resolution of a
// connection's (user, client-id) to the most specific configured entity, and the per-entity
// sensors with their inactivity expiry. It knows nothing of ZooKeeper, connections or Kafka
// messages: the broker feeds it the configured entities (SetQuotas) and asks it, per request,
// for a Handle to record bytes and get a throttle time; muting the connection and answering
// with throttle_time_ms are the caller's.
//
// # Must never import
//
// Any other samsa package, kmsg, go-metrics, logrus: it is a pure leaf (tier 0). Metrics are
// exported through Options hooks.
//
// # Concurrency
//
// Manager's methods and Handle's methods are safe for concurrent use. Enabled is one atomic
// load, so a broker without quotas pays nothing else per request. The configured entities of a
// kind are an immutable Table published through an atomic pointer. Sensors live in a map per
// kind guarded by an RWMutex (read lock to find one, write lock to create one, and then, at
// most once a minute, to drop sensors idle for an hour); each Sensor has its own mutex around
// its samples (and token bucket); the exempt rate has its own mutex, taken alone. A Mutation
// belongs to one request. Lock order: kind map lock → Sensor.mu; hooks run with the kind map lock held
// and must not call back into the Manager. The package starts no goroutines and keeps no
// timers: time comes from Options.Now.
//
// # Formats
//
// Rates are bytes per second (Request: percent of a thread; ControllerMutation: partitions
// per second) as float64; throttle times are whole milliseconds as Kafka
// rounds them (Math.round). User names are Kafka's sanitized principal names (URL-encoded, as
// under /config/users); client ids are the raw header client ids.
package quota
