package config

import (
	"reflect"
	"testing"
)

func entry(entries []Entry, name string) Entry {
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	return Entry{}
}

// TestConfigDescribeTopicSources checks DescribeConfigs sources against Kafka
// 2.8's rules: a topic override is TOPIC_CONFIG, a broker key given in
// server.properties is STATIC_BROKER_CONFIG, and an unset ms key hides its
// hours synonym (Kafka's dropWhile), so retention.ms stays DEFAULT_CONFIG.
func TestConfigDescribeTopicSources(t *testing.T) {
	b := mustBroker(t, minimal("log.segment.bytes", "1073741824", "log.retention.hours", "168"))
	tc, err := TopicFromOverrides(b, map[string]string{"cleanup.policy": "compact"})
	if err != nil {
		t.Fatal(err)
	}
	entries := tc.DescribeTopic(b)
	if len(entries) != len(TopicKeys) {
		t.Fatalf("%d entries", len(entries))
	}
	checks := []struct {
		name   string
		source ConfigSource
		value  string
	}{
		{"cleanup.policy", SourceTopic, "compact"},
		{"segment.bytes", SourceStaticBroker, "1073741824"},
		{"retention.ms", SourceDefault, "604800000"},
		{"min.insync.replicas", SourceDefault, "1"},
		{"follower.replication.throttled.replicas", SourceDefault, ""},
	}
	for _, c := range checks {
		e := entry(entries, c.name)
		if e.Source != c.source || e.Value != c.value {
			t.Errorf("%s: source %d value %q, want %d %q", c.name, e.Source, e.Value, c.source, c.value)
		}
	}
	want := []Synonym{{"cleanup.policy", "compact", SourceTopic}, {"log.cleanup.policy", "delete", SourceDefault}}
	if got := entry(entries, "cleanup.policy").Synonyms; !reflect.DeepEqual(got, want) {
		t.Errorf("synonyms %v", got)
	}
	b2 := mustBroker(t, minimal("log.retention.ms", "1000"))
	tc2, _ := TopicFromOverrides(b2, nil)
	if e := entry(tc2.DescribeTopic(b2), "retention.ms"); e.Source != SourceStaticBroker || e.Value != "1000" {
		t.Errorf("retention.ms with log.retention.ms set: %+v", e)
	}
}

func TestConfigDescribeBroker(t *testing.T) {
	b := mustBroker(t, minimal("num.partitions", "3"))
	entries := b.DescribeBroker()
	if len(entries) != len(BrokerKeys) {
		t.Fatalf("%d entries", len(entries))
	}
	if e := entry(entries, "num.partitions"); e.Source != SourceStaticBroker || e.Value != "3" || !e.ReadOnly {
		t.Errorf("num.partitions: %+v", e)
	}
	if e := entry(entries, "message.max.bytes"); e.Source != SourceDefault || e.ReadOnly {
		t.Errorf("message.max.bytes: %+v", e)
	}
	if e := entry(entries, "log.retention.ms"); !e.Null || e.Source != SourceDefault {
		t.Errorf("log.retention.ms: %+v", e)
	}
}
