package broker

// Authorization helpers: one per resource kind, so each NN_<api>.go handler
// states its Kafka 2.8 check in one line (KafkaApis + AuthHelper). With no
// authorizer (authorizer.class.name empty) every helper allows, as Kafka
// without an authorizer does.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

// clientIP is the peer address as the authorizer matches hosts: Kafka's
// InetAddress.getHostAddress, without the leading slash of clientHost.
func (r *request) clientIP() string { return strings.TrimPrefix(r.clientHost, "/") }

// authorized reports whether r's principal may do op on the literal
// resource (t, name).
func (b *Broker) authorized(r *request, op acl.Operation, t acl.ResourceType, name string) bool {
	if b.authz == nil {
		return true
	}
	return b.authz.Authorize(r.principal, r.clientIP(), op, t, name)
}

// authorizedTopic: op on topic.
func (b *Broker) authorizedTopic(r *request, op acl.Operation, topic string) bool {
	return b.authorized(r, op, acl.ResourceTopic, topic)
}

// authorizedGroup: op on group.
func (b *Broker) authorizedGroup(r *request, op acl.Operation, group string) bool {
	return b.authorized(r, op, acl.ResourceGroup, group)
}

// authorizedCluster: op on the cluster resource (kafka-cluster).
func (b *Broker) authorizedCluster(r *request, op acl.Operation) bool {
	return b.authorized(r, op, acl.ResourceCluster, acl.ClusterName)
}

// AuthorizedTransactionalID: op (Write or Describe) on a transactional id.
// A nil id is never authorized (Kafka: "transactionalId != null &&
// authorize(...)"). The transaction handlers call it: EndTxn,
// AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit need Write,
// FindCoordinator with key type 1 needs Describe, Produce with
// transactional batches needs Write (done in 00_produce.go).
func (b *Broker) authorizedTransactionalID(r *request, op acl.Operation, id *string) bool {
	if b.authz == nil {
		return true
	}
	return id != nil && b.authz.Authorize(r.principal, r.clientIP(), op, acl.ResourceTransactionalID, *id)
}

// authorizedInitProducerID is Kafka 2.8's InitProducerId check: with a
// transactional id, Write on it; without one (an idempotent producer),
// IdempotentWrite on the cluster or, since KIP-679, Write on at least one
// topic. false answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED or
// CLUSTER_AUTHORIZATION_FAILED respectively.
func (b *Broker) authorizedInitProducerID(r *request, transactionalID *string) bool {
	if b.authz == nil {
		return true
	}
	if transactionalID != nil {
		return b.authorizedTransactionalID(r, acl.OpWrite, transactionalID)
	}
	return b.authorizedCluster(r, acl.OpIdempotentWrite) ||
		b.authz.AuthorizeByResourceType(r.principal, r.clientIP(), acl.OpWrite, acl.ResourceTopic)
}

// authorizedTopicsCache memoises one request's per-topic decisions, as
// Kafka's filterByAuthorized decides each distinct topic name once.
type authorizedTopicsCache struct {
	b    *Broker
	r    *request
	op   acl.Operation
	seen map[string]bool
	// decideAll, when set, answers for every topic (a follower fetch).
	decideAll *bool
}

func (b *Broker) topicAuthCache(r *request, op acl.Operation) *authorizedTopicsCache {
	return &authorizedTopicsCache{b: b, r: r, op: op}
}

// ok reports whether the request's principal may do the cache's op on topic.
func (c *authorizedTopicsCache) ok(topic string) bool {
	if c.b.authz == nil {
		return true
	}
	if c.decideAll != nil {
		return *c.decideAll
	}
	if v, hit := c.seen[topic]; hit {
		return v
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	v := c.b.authorizedTopic(c.r, c.op, topic)
	c.seen[topic] = v
	return v
}

// fetchAuthorizer returns Kafka 2.8's Fetch check: a follower fetch
// (replica_id >= 0) is allowed for every topic or none, by ClusterAction on
// the cluster (CVE-2018-1288); a consumer fetch needs Read per topic.
func (b *Broker) fetchAuthorizer(r *request, replicaID int32) *authorizedTopicsCache {
	c := b.topicAuthCache(r, acl.OpRead)
	if b.authz != nil && replicaID >= 0 {
		ok := b.authorizedCluster(r, acl.OpClusterAction)
		c.decideAll = &ok
	}
	return c
}

// describeOrClusterAction is Kafka 2.8's OffsetForLeaderEpoch check:
// ClusterAction on the cluster allows every topic (followers), else
// Describe per topic (KIP-320 consumers).
func (b *Broker) describeOrClusterAction(r *request) *authorizedTopicsCache {
	c := b.topicAuthCache(r, acl.OpDescribe)
	if b.authz != nil && b.authorizedCluster(r, acl.OpClusterAction) {
		ok := true
		c.decideAll = &ok
	}
	return c
}

// Kafka's default messages of the authorization errors (Errors.java).
const (
	msgTopicAuthFailed   = "Topic authorization failed."
	msgClusterAuthFailed = "Cluster authorization failed."
	msgGroupAuthFailed   = "Group authorization failed."
)

// configResourceDenied is the DescribeConfigs / AlterConfigs /
// IncrementalAlterConfigs check of one resource (Kafka 2.8): BROKER and
// BROKER_LOGGER need op on the cluster (CLUSTER_AUTHORIZATION_FAILED), TOPIC
// op on the topic (TOPIC_AUTHORIZATION_FAILED). It returns the error code
// and message, or 0 when allowed; other resource types are left to the
// handler's own validation.
func (b *Broker) configResourceDenied(r *request, resourceType kmsg.ConfigResourceType, name string, op acl.Operation) (int16, *string) {
	if b.authz == nil {
		return 0, nil
	}
	switch resourceType {
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		if !b.authorizedCluster(r, op) {
			m := msgClusterAuthFailed
			return kerr.ClusterAuthorizationFailed.Code, &m
		}
	case kmsg.ConfigResourceTypeTopic:
		if !b.authorizedTopic(r, op, name) {
			m := msgTopicAuthFailed
			return kerr.TopicAuthorizationFailed.Code, &m
		}
	}
	return 0, nil
}
