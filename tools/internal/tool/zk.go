package tool

// ZooKeeper settings shared by the --zookeeper code paths.

import (
	"path"
	"time"

	"samsa/zkutil"
)

// ZKTimeout is the session and connection timeout of the tools' ZooKeeper
// client (Kafka's TopicCommand uses 30 s for both).
const ZKTimeout = 30 * time.Second

// GroupOffsetsDir is /consumers/<g>/offsets, derived from zkutil's paths
// (STYLE S8.1: znode paths are spelled only in zkutil).
func GroupOffsetsDir(group string) string { return path.Dir(zkutil.ConsumerOffsetsPath(group, "t")) }
