package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestConfigTopicDefaultsFromBroker(t *testing.T) {
	b := mustBroker(t, minimal(
		"log.retention.minutes", "10", "log.roll.hours", "1", "log.segment.bytes", "1000",
		"log.cleanup.policy", "compact", "min.insync.replicas", "2", "message.max.bytes", "2000",
	))
	tc, err := TopicFromOverrides(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tc.RetentionMs != 600000 || tc.SegmentMs != 3600000 || tc.SegmentBytes != 1000 ||
		!reflect.DeepEqual(tc.CleanupPolicy, []string{"compact"}) || tc.MinInsyncReplicas != 2 ||
		tc.MaxMessageBytes != 2000 || tc.FlushMs != 9223372036854775807 {
		t.Errorf("topic = %+v", tc)
	}
	// Defaults on the stock broker equal each TopicKeys row's Default.
	stock, err := TopicFromOverrides(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range TopicKeys {
		if v, override, _ := stock.Value(k.Name); v != k.Default || override {
			t.Errorf("%s: stock default %q, table says %q", k.Name, v, k.Default)
		}
	}
}

func TestConfigTopicOverrides(t *testing.T) {
	tc, err := TopicFromOverrides(nil, map[string]string{
		"cleanup.policy": "compact,delete", "retention.ms": "-1", "segment.bytes": "1048576",
		"min.cleanable.dirty.ratio": "0.1", "leader.replication.throttled.replicas": "0:1,1:2",
		"follower.replication.throttled.replicas": "*", "unclean.leader.election.enable": "TRUE",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tc.CleanupPolicy, []string{"compact", "delete"}) || tc.RetentionMs != -1 ||
		tc.SegmentBytes != 1048576 || tc.MinCleanableDirtyRatio != 0.1 || !tc.UncleanLeaderElectionEnable {
		t.Errorf("topic = %+v", tc)
	}
	if v, override, ok := tc.Value("segment.bytes"); v != "1048576" || !override || !ok {
		t.Errorf("Value = %q %v %v", v, override, ok)
	}
	if len(tc.Overrides()) != 7 {
		t.Errorf("Overrides = %v", tc.Overrides())
	}
}

func TestConfigTopicValidation(t *testing.T) {
	err := ValidateTopicOverrides(map[string]string{
		"retention.mss": "1", "segment.bytes": "10", "cleanup.policy": "shred",
		"min.insync.replicas": "0", "compression.type": "brotli", "leader.replication.throttled.replicas": "a:b",
		"min.cleanable.dirty.ratio": "1.5",
	})
	if err == nil {
		t.Fatal("want error")
	}
	if !errors.Is(err, ErrUnknownTopicConfig) {
		t.Error("unknown name not marked ErrUnknownTopicConfig")
	}
	for _, s := range []string{"retention.mss", "segment.bytes", "cleanup.policy", "min.insync.replicas", "compression.type", "leader.replication.throttled.replicas", "min.cleanable.dirty.ratio"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not mention %s:\n%v", s, err)
		}
	}
	if err := ValidateTopicOverrides(map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}); err == nil {
		t.Error("min > max compaction lag accepted")
	}
	if err := ValidateTopicOverrides(map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}); err != nil {
		t.Errorf("valid overrides rejected: %v", err)
	}
}

// TestConfigDocsUpToDate fails when docs/configuration.md was not
// regenerated after a change to the key tables ("go generate ./config").
func TestConfigDocsUpToDate(t *testing.T) {
	got, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(Markdown()) {
		t.Fatal("docs/configuration.md is stale: run go generate ./config")
	}
}
