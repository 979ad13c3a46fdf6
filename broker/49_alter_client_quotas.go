package broker

// AlterClientQuotas: v0-1
//
// Behaviour:
//   - Sets or removes quota values of user, client-id and user/client-id
//     entities (a null name is the default entity), stored in
//     /config/users and /config/clients with a /config/changes
//     notification, where kafka-configs.sh writes them in ZooKeeper mode;
//     and connection_creation_rate of ip entities (KIP-612, alone, an IP
//     or a resolvable host, whole numbers from 0) in /config/ips
//     (quota_ip.go).
//   - Keys: producer_byte_rate, consumer_byte_rate, request_percentage,
//     controller_mutation_rate; others, non-positive values, or other
//     entity types answer INVALID_REQUEST per entry.
//   - validate_only validates and writes nothing. Quotas are not enforced
//     by Samsa yet.
//   - Authorization: AlterConfigs on the cluster, else every entry
//     CLUSTER_AUTHORIZATION_FAILED and nothing changes (Kafka 2.8).
//
// Version notes:
//   - v1: flexible.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/quota/zkstore"
)

func (b *Broker) handleAlterClientQuotas(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	for _, en := range req.Entries {
		re := kmsg.NewAlterClientQuotasResponseEntry()
		var parts [][2]*string
		for _, e := range en.Entity {
			t := e.Type
			parts = append(parts, [2]*string{&t, e.Name})
			re.Entity = append(re.Entity, kmsg.AlterClientQuotasResponseEntryEntity{Type: e.Type, Name: e.Name})
		}
		if !b.authorizedCluster(r, acl.OpAlterConfigs) {
			re.ErrorCode, re.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(msgClusterAuthFailed)
		} else if err := b.alterEntityQuotas(parts, en.Ops, req.ValidateOnly); err != nil {
			b.setTopicErr(&re.ErrorCode, &re.ErrorMessage, err)
		}
		resp.Entries = append(resp.Entries, re)
	}
	return resp, nil
}

// alterEntityQuotas applies one entry: an "ip" entity to its
// connection_creation_rate (quota_ip.go; it may not be combined with user
// or client-id, as in Kafka), the others to their client quotas.
func (b *Broker) alterEntityQuotas(parts [][2]*string, ops []kmsg.AlterClientQuotasRequestEntryOp, validateOnly bool) error {
	var ip *[2]*string
	for i := range parts {
		if parts[i][0] != nil && *parts[i][0] == entityIP {
			ip = &parts[i]
		}
	}
	if ip == nil {
		return b.alterQuotas(parts, ops, validateOnly)
	}
	if len(parts) > 1 {
		return fmt.Errorf("%w: Invalid quota entity combination, IP entity should not be combined with User or ClientId", errInvalidRequest)
	}
	qops := make([]quotaOp, len(ops))
	for i, op := range ops {
		qops[i] = quotaOp{key: op.Key, value: op.Value, remove: op.Remove}
	}
	return b.alterIPQuota(ip[1], qops, validateOnly)
}

func (b *Broker) alterQuotas(parts [][2]*string, ops []kmsg.AlterClientQuotasRequestEntryOp, validateOnly bool) error {
	e, err := zkstore.ParseEntity(parts)
	if err != nil {
		return fmt.Errorf("%w: %w", errInvalidRequest, err)
	}
	vals, err := zkstore.Values(b.zk, e)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if !zkstore.Keys[op.Key] {
			return fmt.Errorf("%w: unknown quota key %q", errInvalidRequest, op.Key)
		}
		if op.Remove {
			delete(vals, op.Key)
			continue
		}
		if op.Value <= 0 {
			return fmt.Errorf("%w: quota %s must be positive", errInvalidRequest, op.Key)
		}
		vals[op.Key] = op.Value
	}
	if validateOnly {
		return nil
	}
	return zkstore.Set(b.zk, e, vals)
}
