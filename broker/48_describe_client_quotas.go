package broker

// DescribeClientQuotas: v0-1
//
// Behaviour:
//   - Reads the quotas stored for user, client-id and user/client-id
//     entities under /config/users and /config/clients (Kafka 2.8
//     ZooKeeper mode) and returns the entities that match every component
//     filter (exact name, the default entity, or any); strict requires the
//     entity to have exactly the filtered types (KIP-546).
//   - Quotas are stored and described but not enforced by Samsa yet.
//   - ip entities (KIP-612 connection_creation_rate, /config/ips) are
//     described unless a user or client-id component is given; with an
//     ip component only they are (Kafka 2.8). Other entity types answer
//     INVALID_REQUEST.
//   - Authorization: DescribeConfigs on the cluster, else
//     CLUSTER_AUTHORIZATION_FAILED (Kafka 2.8).
//
// Version notes:
//   - v1: flexible.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/quota/zkstore"
	"samsa/zkutil"
)

func (b *Broker) handleDescribeClientQuotas(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	if !b.authorizedCluster(r, acl.OpDescribeConfigs) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(msgClusterAuthFailed)
		return resp, nil
	}
	var ipComp *kmsg.DescribeClientQuotasRequestComponent
	userClient := false
	for i, c := range req.Components {
		switch c.EntityType {
		case zkstore.EntityUser, zkstore.EntityClient:
			userClient = true
		case entityIP:
			ipComp = &req.Components[i]
		default:
			b.setTopicErr(&resp.ErrorCode, &resp.ErrorMessage, errInvalidRequest)
			return resp, nil
		}
	}
	// Kafka's ZkAdminManager.describeClientQuotas: user/client-id
	// entities unless an ip component is given, ip entities unless a
	// user or client-id one is (both with neither).
	if !userClient {
		if err := b.describeIPQuotas(ipComp, resp); err != nil {
			b.setTopicErr(&resp.ErrorCode, &resp.ErrorMessage, err)
			return resp, nil
		}
	}
	if ipComp != nil {
		return resp, nil
	}
	entities, err := b.zk.QuotaEntities()
	if err != nil {
		b.setTopicErr(&resp.ErrorCode, &resp.ErrorMessage, err)
		return resp, nil
	}
	for _, e := range entities {
		if !quotaMatches(e, req.Components, req.Strict) {
			continue
		}
		vals, err := zkstore.Values(b.zk, e)
		if err != nil {
			b.setTopicErr(&resp.ErrorCode, &resp.ErrorMessage, err)
			return resp, nil
		}
		if len(vals) == 0 {
			continue
		}
		ent := kmsg.NewDescribeClientQuotasResponseEntry()
		if e.HasUser {
			ent.Entity = append(ent.Entity, kmsg.DescribeClientQuotasResponseEntryEntity{Type: zkstore.EntityUser, Name: e.User})
		}
		if e.HasClient {
			ent.Entity = append(ent.Entity, kmsg.DescribeClientQuotasResponseEntryEntity{Type: zkstore.EntityClient, Name: e.Client})
		}
		keys := make([]string, 0, len(vals))
		for k := range vals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ent.Values = append(ent.Values, kmsg.DescribeClientQuotasResponseEntryValue{Key: k, Value: vals[k]})
		}
		resp.Entries = append(resp.Entries, ent)
	}
	return resp, nil
}

// describeIPQuotas adds the ip entities with a connection_creation_rate
// that match comp (nil: all) to resp, in name order.
func (b *Broker) describeIPQuotas(comp *kmsg.DescribeClientQuotasRequestComponent, resp *kmsg.DescribeClientQuotasResponse) error {
	quotas, err := b.ipQuotas()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(quotas))
	for n := range quotas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var name *string
		if n != defaultBrokerEntity {
			name = &n
		}
		if comp != nil && ((comp.MatchType == kmsg.QuotasMatchTypeExact && (name == nil || comp.Match == nil || *comp.Match != n)) ||
			(comp.MatchType == kmsg.QuotasMatchTypeDefault && name != nil)) {
			continue
		}
		ent := kmsg.NewDescribeClientQuotasResponseEntry()
		ent.Entity = append(ent.Entity, kmsg.DescribeClientQuotasResponseEntryEntity{Type: entityIP, Name: name})
		ent.Values = append(ent.Values, kmsg.DescribeClientQuotasResponseEntryValue{Key: ipConnectionRateKey, Value: quotas[n]})
		resp.Entries = append(resp.Entries, ent)
	}
	return nil
}

// quotaMatches applies DescribeClientQuotas filters (Kafka
// ZkAdminManager.describeClientQuotas).
func quotaMatches(e zkutil.QuotaEntity, comps []kmsg.DescribeClientQuotasRequestComponent, strict bool) bool {
	seenUser, seenClient := false, false
	for _, c := range comps {
		has, name := e.HasUser, e.User
		if c.EntityType == zkstore.EntityClient {
			has, name = e.HasClient, e.Client
			seenClient = true
		} else {
			seenUser = true
		}
		if !has {
			return false
		}
		switch c.MatchType {
		case kmsg.QuotasMatchTypeExact:
			if name == nil || c.Match == nil || *name != *c.Match {
				return false
			}
		case kmsg.QuotasMatchTypeDefault:
			if name != nil {
				return false
			}
		}
	}
	if strict && (e.HasUser != seenUser || e.HasClient != seenClient) {
		return false
	}
	return true
}
