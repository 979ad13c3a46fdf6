package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/metadata"
)

// metadataAuthorize splits the requested topic names as Kafka 2.8's
// handleTopicMetadataRequest does: it returns the names to answer normally
// and the refusals to append at the end of the response. All-topics
// requests drop what the principal may not Describe; named requests answer
// TOPIC_AUTHORIZATION_FAILED for it (is_internal false, as Kafka sets it
// without looking). A missing topic that would be auto-created also needs
// Create on the cluster or the topic; without it the answer is
// TOPIC_AUTHORIZATION_FAILED with is_internal set.
func (b *Broker) metadataAuthorize(r *request, snap *metadata.Snapshot, names []string, allTopics, autoCreate bool) ([]string, []kmsg.MetadataResponseTopic) {
	if b.authz == nil {
		return names, nil
	}
	var refused []kmsg.MetadataResponseTopic
	var noCreate []string
	kept := names[:0:0]
	clusterCreate, clusterChecked := false, false
	for _, name := range names {
		if !b.authorizedTopic(r, acl.OpDescribe, name) {
			if !allTopics {
				refused = append(refused, metadataRefused(name, false))
			}
			continue
		}
		if autoCreate && len(snap.Partitions(name)) == 0 {
			if !clusterChecked {
				clusterCreate, clusterChecked = b.authorizedCluster(r, acl.OpCreate), true
			}
			if !clusterCreate && !b.authorizedTopic(r, acl.OpCreate, name) {
				noCreate = append(noCreate, name)
				continue
			}
		}
		kept = append(kept, name)
	}
	// Kafka lists the topics refused for Create before those refused for
	// Describe.
	createRefused := make([]kmsg.MetadataResponseTopic, 0, len(noCreate)+len(refused))
	for _, name := range noCreate {
		createRefused = append(createRefused, metadataRefused(name, isInternalTopic(name)))
	}
	return kept, append(createRefused, refused...)
}

func metadataRefused(name string, internal bool) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = kmsg.StringPtr(name)
	mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
	mt.IsInternal = internal
	mt.AuthorizedOperations = authorizedOperationsOmitted
	mt.Partitions = []kmsg.MetadataResponseTopicPartition{}
	return mt
}

// authorizedOperations is AuthHelper.authorizedOperations: bit 1<<code set
// for each supported operation the principal may do on the resource.
func (b *Broker) authorizedOperations(r *request, t acl.ResourceType, name string) int32 {
	var bits int32
	for _, op := range acl.SupportedOperations(t) {
		if b.authz == nil || b.authorized(r, op, t, name) {
			bits |= 1 << uint(op)
		}
	}
	return bits
}
