package zkutil

import "strconv"

// Paths of every znode kind Samsa reads or writes, following Kafka 2.8's
// kafka.zk.ZkData. All paths are relative to the chroot of the connect
// string; the Client adds the chroot in one place. No other Samsa package
// builds a znode path (STYLE S8.1).

// Fixed znode paths.
const (
	brokersPath                  = "/brokers"
	brokerIDsPath                = "/brokers/ids"
	brokerSeqIDPath              = "/brokers/seqid"
	topicsPath                   = "/brokers/topics"
	controllerPath               = "/controller"
	controllerEpochPath          = "/controller_epoch"
	clusterPath                  = "/cluster"
	clusterIDPath                = "/cluster/id"
	adminPath                    = "/admin"
	deleteTopicsPath             = "/admin/delete_topics"
	reassignPartitionsPath       = "/admin/reassign_partitions"
	preferredReplicaElectionPath = "/admin/preferred_replica_election"
	isrChangeNotificationPath    = "/isr_change_notification"
	logDirEventNotificationPath  = "/log_dir_event_notification"
	configPath                   = "/config"
	configChangesPath            = "/config/changes"
	consumersPath                = "/consumers"
	latestProducerIDBlockPath    = "/latest_producer_id_block"
	featurePath                  = "/feature"
)

// Prefixes of persistent-sequential notification children. ZooKeeper
// appends a 10-digit zero-padded counter (isr_change_0000000042).
const (
	IsrChangeSeqPrefix    = "isr_change_"
	LogDirEventSeqPrefix  = "log_dir_event_"
	ConfigChangeSeqPrefix = "config_change_"
)

// Entity types under /config (Kafka ConfigType).
const (
	ConfigTypeTopic  = "topics"
	ConfigTypeClient = "clients"
	ConfigTypeUser   = "users"
	ConfigTypeBroker = "brokers"
	ConfigTypeIP     = "ips"
)

// ConfigTypeLogEndReplicas is Samsa's own /config entity type: per topic,
// the replicas a reassignment starts at the leader's log end
// (codec_log_end.go). Kafka brokers ignore it; it is not in
// ConfigEntityTypes.
const ConfigTypeLogEndReplicas = "samsa_log_end_replicas"

// ConfigEntityTypes lists the /config/<type> parents, in Kafka's order.
func ConfigEntityTypes() []string {
	return []string{ConfigTypeTopic, ConfigTypeClient, ConfigTypeUser, ConfigTypeBroker, ConfigTypeIP}
}

func itoa(v int32) string { return strconv.FormatInt(int64(v), 10) }

// BrokersPath is /brokers.
func BrokersPath() string { return brokersPath }

// BrokerIDsPath is /brokers/ids, parent of the broker registrations.
func BrokerIDsPath() string { return brokerIDsPath }

// BrokerIDPath is /brokers/ids/<id> (ephemeral broker registration).
func BrokerIDPath(id int32) string { return brokerIDsPath + "/" + itoa(id) }

// BrokerSeqIDPath is /brokers/seqid, whose zkVersion generates broker ids.
func BrokerSeqIDPath() string { return brokerSeqIDPath }

// TopicsPath is /brokers/topics.
func TopicsPath() string { return topicsPath }

// TopicPath is /brokers/topics/<t> (replica assignment).
func TopicPath(topic string) string { return topicsPath + "/" + topic }

// TopicPartitionsPath is /brokers/topics/<t>/partitions.
func TopicPartitionsPath(topic string) string { return TopicPath(topic) + "/partitions" }

// PartitionPath is /brokers/topics/<t>/partitions/<p>.
func PartitionPath(topic string, partition int32) string {
	return TopicPartitionsPath(topic) + "/" + itoa(partition)
}

// PartitionStatePath is /brokers/topics/<t>/partitions/<p>/state (leader and ISR).
func PartitionStatePath(topic string, partition int32) string {
	return PartitionPath(topic, partition) + "/state"
}

// ControllerPath is /controller (ephemeral, the active controller).
func ControllerPath() string { return controllerPath }

// ControllerEpochPath is /controller_epoch (ASCII integer).
func ControllerEpochPath() string { return controllerEpochPath }

// ClusterIDPath is /cluster/id.
func ClusterIDPath() string { return clusterIDPath }

// AdminPath is /admin.
func AdminPath() string { return adminPath }

// DeleteTopicsPath is /admin/delete_topics.
func DeleteTopicsPath() string { return deleteTopicsPath }

// DeleteTopicPath is /admin/delete_topics/<t> (deletion marker).
func DeleteTopicPath(topic string) string { return deleteTopicsPath + "/" + topic }

// ReassignPartitionsPath is /admin/reassign_partitions.
func ReassignPartitionsPath() string { return reassignPartitionsPath }

// PreferredReplicaElectionPath is /admin/preferred_replica_election.
func PreferredReplicaElectionPath() string { return preferredReplicaElectionPath }

// IsrChangeNotificationPath is /isr_change_notification.
func IsrChangeNotificationPath() string { return isrChangeNotificationPath }

// IsrChangeNotificationSeqPath is /isr_change_notification/<node> for a child
// name returned by GetIsrChangeNotifications.
func IsrChangeNotificationSeqPath(node string) string { return isrChangeNotificationPath + "/" + node }

// LogDirEventNotificationPath is /log_dir_event_notification.
func LogDirEventNotificationPath() string { return logDirEventNotificationPath }

// LogDirEventNotificationSeqPath is /log_dir_event_notification/<node> for a
// child name returned by GetLogDirEventNotifications.
func LogDirEventNotificationSeqPath(node string) string {
	return logDirEventNotificationPath + "/" + node
}

// ConfigPath is /config.
func ConfigPath() string { return configPath }

// ConfigChangesPath is /config/changes.
func ConfigChangesPath() string { return configChangesPath }

// EntityTypeConfigPath is /config/<type>, e.g. /config/topics.
func EntityTypeConfigPath(entityType string) string { return configPath + "/" + entityType }

// EntityConfigPath is /config/<type>/<name>, e.g. /config/topics/foo.
func EntityConfigPath(entityType, name string) string {
	return EntityTypeConfigPath(entityType) + "/" + name
}

// ConsumersPath is /consumers (old ZooKeeper consumers).
func ConsumersPath() string { return consumersPath }

// ConsumerGroupPath is /consumers/<g>.
func ConsumerGroupPath(group string) string { return consumersPath + "/" + group }

// ConsumerIDsPath is /consumers/<g>/ids.
func ConsumerIDsPath(group string) string { return ConsumerGroupPath(group) + "/ids" }

// ConsumerIDPath is /consumers/<g>/ids/<id> (ephemeral registration).
func ConsumerIDPath(group, id string) string { return ConsumerIDsPath(group) + "/" + id }

// ConsumerOwnersPath is /consumers/<g>/owners/<t>.
func ConsumerOwnersPath(group, topic string) string {
	return ConsumerGroupPath(group) + "/owners/" + topic
}

// ConsumerOwnerPath is /consumers/<g>/owners/<t>/<p> (ephemeral owner).
func ConsumerOwnerPath(group, topic string, partition int32) string {
	return ConsumerOwnersPath(group, topic) + "/" + itoa(partition)
}

// ConsumerOffsetsPath is /consumers/<g>/offsets/<t>.
func ConsumerOffsetsPath(group, topic string) string {
	return ConsumerGroupPath(group) + "/offsets/" + topic
}

// ConsumerOffsetPath is /consumers/<g>/offsets/<t>/<p> (ASCII offset).
func ConsumerOffsetPath(group, topic string, partition int32) string {
	return ConsumerOffsetsPath(group, topic) + "/" + itoa(partition)
}

// LatestProducerIDBlockPath is /latest_producer_id_block.
func LatestProducerIDBlockPath() string { return latestProducerIDBlockPath }

// FeaturePath is /feature.
func FeaturePath() string { return featurePath }

// PersistentPaths returns the persistent znodes a broker creates at start
// (Kafka 2.8 ZkData.PersistentZkPaths), in creation order. The returned slice
// is the caller's.
func PersistentPaths() []string {
	paths := []string{
		consumersPath,
		brokerIDsPath,
		topicsPath,
		configChangesPath,
		deleteTopicsPath,
		brokerSeqIDPath,
		isrChangeNotificationPath,
		latestProducerIDBlockPath,
		logDirEventNotificationPath,
	}
	for _, t := range ConfigEntityTypes() {
		paths = append(paths, EntityTypeConfigPath(t))
	}
	return paths
}
