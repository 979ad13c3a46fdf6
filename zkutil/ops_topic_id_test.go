package zkutil_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// TestZKCreateTopicWithID: the id goes into /brokers/topics/<t> as Kafka 2.8 writes it
// with IBP >= 2.8-IV0: JSON version 3 with "topic_id", the partitions and empty
// reassignment sets.
func TestZKCreateTopicWithID(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	mustf(t, c.CreatePersistentPaths(), "persistent paths")
	id := zkutil.NewTopicID()
	mustf(t, c.CreateTopicWithID("ids", id, map[int32][]int32{0: {1, 2}}, nil), "create")
	data, _, err := c.Get(zkutil.TopicPath("ids"))
	mustf(t, err, "get")
	var j map[string]any
	mustf(t, json.Unmarshal(data, &j), "json")
	if j["version"] != 3.0 || j["topic_id"] != id || j["adding_replicas"] == nil || j["removing_replicas"] == nil {
		t.Fatalf("znode %s", data)
	}
	a, _, err := c.GetTopicAssignment("ids")
	mustf(t, err, "get assignment")
	if a.Version != 3 || a.TopicID != id || len(a.Partitions[0]) != 2 {
		t.Fatalf("assignment %+v", a)
	}
}

// TestZKNewTopicID: 22 characters of URL-safe base64 of 16 bytes, never zero, never
// starting with '-', and distinct.
func TestZKNewTopicID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		s := zkutil.NewTopicID()
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(s) != 22 || len(b) != 16 || s[0] == '-' || seen[s] || s == "AAAAAAAAAAAAAAAAAAAAAA" {
			t.Fatalf("bad id %q (%v)", s, err)
		}
		seen[s] = true
	}
}
