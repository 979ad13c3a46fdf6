package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/quota"
	"samsa/broker/wire"
)

// controller_mutation_rate (KIP-599, Kafka 2.8's ControllerMutationQuotaManager):
// CreateTopics, CreatePartitions and DeleteTopics record, per topic and
// before writing it, the partitions it creates (CreateTopics: the topic's;
// CreatePartitions: the new ones) or deletes (DeleteTopics: the topic's
// count in the metadata cache) against the client's token bucket;
// validate_only records nothing. From CreateTopics v6, CreatePartitions v3
// and DeleteTopics v5 the quota is strict: a topic met while the bucket is
// below zero is refused with THROTTLING_QUOTA_EXCEEDED ("The throttling
// quota has been exceeded.") and the answer carries the time until the
// bucket is back at zero; older versions are permissive: every topic goes
// through and the answer is throttled (throttle_time_ms and a muted
// connection) once the bucket is below zero.

// errThrottlingQuotaExceeded is a topic refused by a strict mutation quota.
var errThrottlingQuotaExceeded error = kerr.ThrottlingQuotaExceeded

// strictMutationSince is the first version of each mutating API whose
// quota is strict (KafkaApis' newQuotaFor(request, strictSinceVersion)).
var strictMutationSince = map[int16]int16{
	kmsg.CreateTopics.Int16():     6,
	kmsg.CreatePartitions.Int16(): 3,
	kmsg.DeleteTopics.Int16():     5,
}

// newMutationQuota returns the controller mutation quota of a mutating
// request, nil for any other request or while no controller_mutation_rate
// is configured.
func (b *Broker) newMutationQuota(req *wire.Request, user, client string) *quota.Mutation {
	since, ok := strictMutationSince[req.Key]
	if !ok || !b.quotas.Enabled(quota.ControllerMutation) {
		return nil
	}
	return b.quotas.NewMutation(user, client, req.Version >= since)
}

// recordMutation records one topic's partitions against the request's
// controller mutation quota: errThrottlingQuotaExceeded when a strict
// quota refuses it (nothing is to be written then).
func (r *request) recordMutation(partitions int) error {
	if r.mutation.Record(float64(partitions)) != nil {
		return errThrottlingQuotaExceeded
	}
	return nil
}
