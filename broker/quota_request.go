package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/quota"
	"samsa/broker/server"
	"samsa/broker/wire"
	"samsa/zkutil"
)

// request_percentage (Kafka 2.8's ClientRequestQuotaManager), Samsa's way:
//   - Kafka records, per request, the time a request handler thread spent
//     on it (requestThreadTimeNanos) and, once the answer is sent, the time
//     the network thread spent (recordNoThrottle: it throttles the next
//     requests, not this one), in percent of one thread for one second.
//     Samsa has no handler pool: each connection's goroutine runs its
//     requests. Its handler time is the wall time of the handler less the
//     time it parked (long-poll fetch in the purgatory, CreateTopics /
//     CreatePartitions waiting for leaders, DeleteTopics waiting for the
//     deletion, JoinGroup / SyncGroup waiting for the group), which Kafka
//     spends in purgatories off the handler threads; its network time is
//     the time to decode the request and to write the answer
//     (server.Options.NetworkTime).
//   - Over the quota the answer carries throttle_time_ms, capped at one
//     quota window (quota.window.size.seconds), and the connection is
//     muted that long, as for byte rates (quota_serve.go); a throttled
//     consumer fetch is answered empty, as Kafka answers it.
//   - Exempt, as Kafka's sendResponseExemptThrottle: the inter-broker
//     requests (LeaderAndIsr, StopReplica, UpdateMetadata,
//     ControlledShutdown, WriteTxnMarkers, AlterPartition) from a principal
//     with ClusterAction and follower fetches (replica_id >= 0) from one;
//     their time goes to the exempt-request-time rate. Refused ones are
//     throttled like any client's (Kafka's RequestQuotaTest
//     testUnauthorizedThrottle). SaslHandshake and SaslAuthenticate are
//     answered by the server before any handler and are not recorded, as
//     Kafka records no quota before authentication.

// park starts timing a wait of the handler; the returned func ends it.
// The parked time is left out of the request's handler time by
// request_percentage and by the server's RequestHandlerAvgIdlePercent
// (handler.Serve reports it with server.Conn.Parked).
func (r *request) park() func() {
	t0 := time.Now()
	return func() { r.parked += time.Since(t0) }
}

// quotaExempt reports whether a request is exempt from request_percentage.
func (b *Broker) quotaExempt(req *wire.Request, row api, r *request) bool {
	if row.interBroker {
		return !r.denied
	}
	if f, ok := req.Body.(*kmsg.FetchRequest); ok && f.ReplicaID >= 0 {
		return b.authz == nil || b.authorizedCluster(r, acl.OpClusterAction)
	}
	return false
}

// recordNetworkTime is server.Options.NetworkTime: a request's decode and
// write time, recorded without throttle against its client's
// request_percentage (or the exempt rate), as Kafka's
// recordNetworkThreadTimeCallback.
func (b *Broker) recordNetworkTime(c *server.Conn, req *wire.Request, d time.Duration) {
	if !b.quotas.Enabled(quota.Request) {
		return
	}
	pct := quota.NanosToPercent(int64(d))
	row := b.apis[req.Key]
	if row.interBroker {
		b.quotas.RecordExempt(pct)
		return
	}
	if f, ok := req.Body.(*kmsg.FetchRequest); ok && f.ReplicaID >= 0 {
		b.quotas.RecordExempt(pct)
		return
	}
	b.quotas.Get(quota.Request, zkutil.Sanitize(c.Principal().Name), req.ClientIDString()).RecordNoThrottle(pct)
}
