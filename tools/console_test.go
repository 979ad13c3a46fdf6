package tools

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func TestToolConsoleFormatter(t *testing.T) {
	m := &sarama.ConsumerMessage{Key: []byte("k"), Value: []byte("v"), Partition: 2, Offset: 7, Timestamp: time.UnixMilli(1700000000123)}
	tests := []struct {
		props map[string]string
		want  string
	}{
		{nil, "v\n"},
		{map[string]string{"print.key": "true"}, "k\tv\n"},
		{map[string]string{"print.key": "true", "key.separator": " => "}, "k => v\n"},
		{map[string]string{"print.timestamp": "true", "print.partition": "true", "print.offset": "true", "print.key": "true"}, "CreateTime:1700000000123\tPartition:2\tOffset:7\tk\tv\n"},
		{map[string]string{"print.key": "true", "print.value": "false"}, "k\n"},
		{map[string]string{"line.separator": "|"}, "v|"},
	}
	for _, tc := range tests {
		if got := newFormatter(tc.props).format(m); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.props, got, tc.want)
		}
	}
	null := &sarama.ConsumerMessage{}
	if got := newFormatter(map[string]string{"print.key": "true"}).format(null); got != "null\tnull\n" {
		t.Errorf("null message: %q", got)
	}
}

func TestToolConsoleLineReader(t *testing.T) {
	r := lineReader{parseKey: true, separator: ":"}
	msg, err := r.message("t", "key:val:ue", 1)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := msg.Key.Encode()
	v, _ := msg.Value.Encode()
	if string(k) != "key" || string(v) != "val:ue" {
		t.Errorf("got %q %q", k, v)
	}
	if _, err := r.message("t", "nokey", 3); err == nil || err.Error() != "No key found on line 3: nokey" {
		t.Errorf("err = %v", err)
	}
	r.ignoreError = true
	if msg, err := r.message("t", "nokey", 3); err != nil || msg.Key != nil {
		t.Errorf("ignore.error: %v %v", msg, err)
	}
	plain, _ := lineReader{}.message("t", "a\tb", 1)
	if v, _ := plain.Value.Encode(); string(v) != "a\tb" || plain.Key != nil {
		t.Errorf("plain: %q", v)
	}
	var lines []string
	err = readLines(strings.NewReader("a\r\nb\n\nc"), func(l string, n int) error { lines = append(lines, l); return nil })
	if err != nil || !reflect.DeepEqual(lines, []string{"a", "b", "", "c"}) {
		t.Errorf("readLines: %q %v", lines, err)
	}
}

func TestToolClientProperties(t *testing.T) {
	cfg, err := newSaramaConfig("id", "", map[string]string{
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
		if _, err := newSaramaConfig("id", "", bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// batch.size is only a ceiling in Kafka: with linger.ms=0 a short batch goes at once, so
	// no Sarama flush threshold may hold it back (it would never be sent without a frequency).
	cfg, err = newSaramaConfig("id", "", map[string]string{"batch.size": "16384"})
	if err != nil || cfg.Producer.Flush.Bytes != 0 || cfg.Producer.Flush.Frequency != 0 {
		t.Errorf("batch.size without linger.ms: flush %+v, %v", cfg.Producer.Flush, err)
	}
	cfg, err = newSaramaConfig("id", "", map[string]string{"batch.size": "16384", "linger.ms": "20"})
	if err != nil || cfg.Producer.Flush.Bytes != 16384 || cfg.Producer.Flush.Frequency != 20*time.Millisecond {
		t.Errorf("batch.size with linger.ms: flush %+v, %v", cfg.Producer.Flush, err)
	}
	if _, err := parsePropertyArgs([]string{"novalue"}); err == nil {
		t.Error("property without '=' accepted")
	}
}

func TestToolTopicsHelpers(t *testing.T) {
	a, err := parseReplicaAssignment("1:2, 2:3,3:1")
	if err != nil || !reflect.DeepEqual(a, map[int32][]int32{0: {1, 2}, 1: {2, 3}, 2: {3, 1}}) {
		t.Errorf("assignment %v %v", a, err)
	}
	all := []string{"__consumer_offsets", "orders", "orders-dlq", "payments"}
	got, _ := filterTopics(all, &topicOpts{topic: "orders", hasTopic: true})
	if !reflect.DeepEqual(got, []string{"orders"}) {
		t.Errorf("exact: %v", got)
	}
	got, _ = filterTopics(all, &topicOpts{topic: "orders.*,payments", hasTopic: true})
	if !reflect.DeepEqual(got, []string{"orders", "orders-dlq", "payments"}) {
		t.Errorf("regex: %v", got)
	}
	got, _ = filterTopics(all, &topicOpts{excludeInternal: true})
	if len(got) != 3 {
		t.Errorf("exclude internal: %v", got)
	}
	if _, err := filterTopics(all, &topicOpts{topic: "(", hasTopic: true}); err == nil {
		t.Error("bad regex accepted")
	}
	joined := errors.Join(errors.New("config: unknown topic config name: a"), errors.New("config: invalid value \"x\" for configuration b: no"))
	if got := userMessage(joined); got != "Unknown topic config name: a\ninvalid value \"x\" for configuration b: no" {
		t.Errorf("userMessage: %q", got)
	}
}
