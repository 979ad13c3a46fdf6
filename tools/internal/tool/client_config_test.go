package tool

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func TestToolClientProperties(t *testing.T) {
	cfg, err := NewSaramaConfig("id", "", map[string]string{
		"acks": "all", "compression.type": "zstd", "linger.ms": "5", "auto.offset.reset": "earliest",
		"isolation.level": "read_committed", "client.id": "mine", "unknown.property": "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Producer.RequiredAcks != sarama.WaitForAll || cfg.Producer.Compression != sarama.CompressionZSTD ||
		cfg.Producer.Flush.Frequency != 5*time.Millisecond || cfg.Consumer.Offsets.Initial != sarama.OffsetOldest ||
		cfg.Consumer.IsolationLevel != sarama.ReadCommitted || cfg.ClientID != "mine" {
		t.Errorf("config not applied: %+v", cfg.Producer)
	}
	for _, bad := range []map[string]string{{"acks": "2"}, {"linger.ms": "soon"}, {"auto.offset.reset": "none"}, {"compression.type": "brotli"}} {
		if _, err := NewSaramaConfig("id", "", bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// batch.size is only a ceiling in Kafka: with linger.ms=0 a short batch goes at once, so
	// no Sarama flush threshold may hold it back (it would never be sent without a frequency).
	cfg, err = NewSaramaConfig("id", "", map[string]string{"batch.size": "16384"})
	if err != nil || cfg.Producer.Flush.Bytes != 0 || cfg.Producer.Flush.Frequency != 0 {
		t.Errorf("batch.size without linger.ms: flush %+v, %v", cfg.Producer.Flush, err)
	}
	cfg, err = NewSaramaConfig("id", "", map[string]string{"batch.size": "16384", "linger.ms": "20"})
	if err != nil || cfg.Producer.Flush.Bytes != 16384 || cfg.Producer.Flush.Frequency != 20*time.Millisecond {
		t.Errorf("batch.size with linger.ms: flush %+v, %v", cfg.Producer.Flush, err)
	}
	if _, err := ParsePropertyArgs([]string{"novalue"}); err == nil {
		t.Error("property without '=' accepted")
	}
}
