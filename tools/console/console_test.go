package console

import (
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
