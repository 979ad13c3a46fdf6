package zkutil_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
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

// TestZKCreateTopicFallbacks: the one-multi create falls back to Kafka's two writes when a
// config znode is already there (it is overwritten, last writer wins) or when the parents
// are missing (they are created), and a topic that exists still fails as such.
func TestZKCreateTopicFallbacks(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t)) // no persistent paths: /config/topics and /brokers/topics missing
	assign := map[int32][]int32{0: {1}}
	mustf(t, c.CreateTopic("bare", assign, map[string]string{"retention.ms": "1"}), "create without parents")
	if _, err := c.CreateRecursive(zkutil.EntityConfigPath(zkutil.ConfigTypeTopic, "pre"), []byte(`{"version":1,"config":{"x":"y"}}`), zkutil.Persistent); err != nil {
		t.Fatal(err)
	}
	mustf(t, c.CreateTopic("pre", assign, map[string]string{"retention.ms": "2"}), "create over a config znode")
	for topic, want := range map[string]string{"bare": "1", "pre": "2"} {
		cfg, err := c.GetEntityConfig(zkutil.ConfigTypeTopic, topic)
		mustf(t, err, "config")
		if a, _, err := c.GetTopicAssignment(topic); err != nil || len(a.Partitions) != 1 || cfg["retention.ms"] != want || len(cfg) != 1 {
			t.Fatalf("%s: assignment %+v (%v), config %v", topic, a, err, cfg)
		}
	}
	if err := c.CreateTopic("pre", assign, nil); !errors.Is(err, zkutil.ErrTopicExists) {
		t.Fatalf("create twice: %v", err)
	}
}
