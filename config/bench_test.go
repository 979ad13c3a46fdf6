package config

import (
	"os"
	"testing"

	"samsa/javaprops"
)

func BenchmarkConfigParseServerProperties(b *testing.B) {
	data, err := os.ReadFile("../server.properties")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := javaprops.Load(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConfigTopicFromOverrides(b *testing.B) {
	broker := Defaults()
	overrides := map[string]string{"cleanup.policy": "compact", "segment.bytes": "1048576", "retention.ms": "-1"}
	for i := 0; i < b.N; i++ {
		if _, err := TopicFromOverrides(broker, overrides); err != nil {
			b.Fatal(err)
		}
	}
}
