package clustertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// kcatMsg is one record as kcat -J prints it.
type kcatMsg struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	TsType    string   `json:"tstype"`
	Ts        int64    `json:"ts"`
	Headers   []string `json:"headers"`
	Key       *string  `json:"key"`
	Payload   *string  `json:"payload"`
}

// runBounded runs a client command with a deadline and returns stdout; a
// non-zero exit fails the test with stderr.
func runBounded(t *testing.T, timeout time.Duration, stdin, name string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", name, args, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// kcatJSON consumes topic-partition from start to the end (-e) and decodes
// kcat's JSON lines.
func kcatJSON(t *testing.T, kcat, bootstrap, topic string, partition int32, start string, extra ...string) []kcatMsg {
	t.Helper()
	args := append([]string{"-b", bootstrap, "-C", "-t", topic, "-p", strconv.Itoa(int(partition)),
		"-o", start, "-e", "-q", "-J", "-X", "check.crcs=true"}, extra...)
	out, _ := runBounded(t, 20*time.Second, "", kcat, args...)
	var msgs []kcatMsg
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var m kcatMsg
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("kcat -J line %q: %v", line, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func strp(s string) *string { return &s }

func derefOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

// TestCompatKcatCodecs: librdkafka produces with each compression codec,
// keys and headers, and reads the records back with CRC checks on.
func TestCompatKcatCodecs(t *testing.T) {
	kcat := needTool(t, "kcat")
	c := brokertest.NewCluster(t, 1)
	bootstrap := c.Addr(0)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		topic := "kc-" + codec
		c.CreateTopic(t, topic, 1, 1)
		var in strings.Builder
		for i := 0; i < 50; i++ {
			fmt.Fprintf(&in, "key%d:value-%d-%s\n", i%7, i, strings.Repeat("x", i))
		}
		runBounded(t, 20*time.Second, in.String(), kcat, "-b", bootstrap, "-P", "-t", topic, "-p", "0",
			"-z", codec, "-K", ":", "-H", "h1=v1", "-H", "h2=", "-X", "acks=all", "-X", "linger.ms=50")
		msgs := kcatJSON(t, kcat, bootstrap, topic, 0, "beginning")
		if len(msgs) != 50 {
			t.Fatalf("%s: consumed %d of 50", codec, len(msgs))
		}
		for i, m := range msgs {
			wantV := fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i))
			if m.Offset != int64(i) || derefOr(m.Key, "<nil>") != fmt.Sprintf("key%d", i%7) || derefOr(m.Payload, "<nil>") != wantV {
				t.Fatalf("%s: record %d = %+v", codec, i, m)
			}
			if len(m.Headers) != 4 || m.Headers[0] != "h1" || m.Headers[1] != "v1" || m.Headers[2] != "h2" || m.Headers[3] != "" {
				t.Fatalf("%s: headers of record %d = %q", codec, i, m.Headers)
			}
			if m.TsType != "create" || m.Ts <= 0 {
				t.Fatalf("%s: timestamp of record %d = %s %d", codec, i, m.TsType, m.Ts)
			}
		}
	}
}

// TestCompatKcatTombstones: -Z turns empty values into null values
// (tombstones) and empty keys into null keys; both survive the round trip.
func TestCompatKcatTombstones(t *testing.T) {
	kcat := needTool(t, "kcat")
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "kc-null", 1, 1)
	runBounded(t, 20*time.Second, "k1:v1\nk1:\n:v3\n", kcat, "-b", c.Addr(0), "-P", "-t", "kc-null", "-p", "0", "-K", ":", "-Z")
	msgs := kcatJSON(t, kcat, c.Addr(0), "kc-null", 0, "beginning")
	if len(msgs) != 3 {
		t.Fatalf("consumed %d of 3: %+v", len(msgs), msgs)
	}
	if derefOr(msgs[0].Key, "<nil>") != "k1" || derefOr(msgs[0].Payload, "<nil>") != "v1" {
		t.Fatalf("record 0 = %+v", msgs[0])
	}
	if derefOr(msgs[1].Key, "<nil>") != "k1" || msgs[1].Payload != nil {
		t.Fatalf("record 1 should be a tombstone: %+v", msgs[1])
	}
	if msgs[2].Key != nil || derefOr(msgs[2].Payload, "<nil>") != "v3" {
		t.Fatalf("record 2 should have a null key: %+v", msgs[2])
	}
}

// TestCompatKcatOffsets: start offsets beginning, end, -N (relative to the
// end) and s@timestamp (ListOffsets by timestamp), and -Q queries for
// logical offsets and timestamps.
func TestCompatKcatOffsets(t *testing.T) {
	kcat := needTool(t, "kcat")
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "kc-off", 1, 1)
	c.CreateTopic(t, "kc-empty", 1, 1)
	bootstrap := c.Addr(0)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic("kc-off"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := 0; i < 10; i++ {
		r := &kgo.Record{Value: []byte(fmt.Sprintf("m%d", i)), Timestamp: base.Add(time.Duration(i) * time.Second)}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := cl.ProduceSync(ctx, r).FirstErr()
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	offsetsOf := func(msgs []kcatMsg) []int64 {
		var o []int64
		for _, m := range msgs {
			o = append(o, m.Offset)
		}
		return o
	}
	if got := offsetsOf(kcatJSON(t, kcat, bootstrap, "kc-off", 0, "beginning")); len(got) != 10 {
		t.Fatalf("beginning: %v", got)
	}
	if got := kcatJSON(t, kcat, bootstrap, "kc-off", 0, "end"); len(got) != 0 {
		t.Fatalf("end: %+v", got)
	}
	if got := offsetsOf(kcatJSON(t, kcat, bootstrap, "kc-off", 0, "-3")); fmt.Sprint(got) != "[7 8 9]" {
		t.Fatalf("-3: %v", got)
	}
	if got := offsetsOf(kcatJSON(t, kcat, bootstrap, "kc-off", 0, "4")); fmt.Sprint(got) != "[4 5 6 7 8 9]" {
		t.Fatalf("4: %v", got)
	}
	ts := base.Add(5 * time.Second).UnixMilli()
	msgs := kcatJSON(t, kcat, bootstrap, "kc-off", 0, fmt.Sprintf("s@%d", ts))
	if got := offsetsOf(msgs); fmt.Sprint(got) != "[5 6 7 8 9]" {
		t.Fatalf("s@%d: %v", ts, got)
	}
	if msgs[0].Ts != ts || msgs[0].TsType != "create" {
		t.Fatalf("first record from s@: %+v", msgs[0])
	}
	// s@ between two timestamps starts at the later one.
	if got := offsetsOf(kcatJSON(t, kcat, bootstrap, "kc-off", 0, fmt.Sprintf("s@%d", ts-500))); len(got) != 5 || got[0] != 5 {
		t.Fatalf("s@%d: %v", ts-500, got)
	}
	// e@: stop at the first record at or after the timestamp.
	if got := offsetsOf(kcatJSON(t, kcat, bootstrap, "kc-off", 0, "beginning", "-o", fmt.Sprintf("e@%d", ts))); fmt.Sprint(got) != "[0 1 2 3 4]" {
		t.Fatalf("e@%d: %v", ts, got)
	}

	query := func(spec string) string {
		out, _ := runBounded(t, 20*time.Second, "", kcat, "-b", bootstrap, "-Q", "-t", spec)
		return strings.TrimSpace(out)
	}
	for spec, want := range map[string]string{
		fmt.Sprintf("kc-off:0:%d", ts):        "kc-off [0] offset 5",
		fmt.Sprintf("kc-off:0:%d", ts+100000): "kc-off [0] offset -1",
		"kc-off:0:-1":                         "kc-off [0] offset 10",
		"kc-off:0:-2":                         "kc-off [0] offset 0",
		"kc-empty:0:-1":                       "kc-empty [0] offset 0",
		"kc-empty:0:-2":                       "kc-empty [0] offset 0",
		fmt.Sprintf("kc-empty:0:%d", ts):      "kc-empty [0] offset -1",
	} {
		if got := query(spec); !strings.Contains(got, want) {
			t.Errorf("-Q %s = %q, want %q", spec, got, want)
		}
	}
	if got := kcatJSON(t, kcat, bootstrap, "kc-empty", 0, "beginning"); len(got) != 0 {
		t.Fatalf("empty partition: %+v", got)
	}
}

// TestCompatKcatOldFormats: librdkafka without ApiVersions falls back to
// broker.version.fallback and speaks the old protocol versions (message
// format v0 for 0.8/0.9, v1 with timestamps for 0.10); records written in
// each format read back with a modern client too.
func TestCompatKcatOldFormats(t *testing.T) {
	kcat := needTool(t, "kcat")
	c := brokertest.NewCluster(t, 1)
	bootstrap := c.Addr(0)
	cases := []struct{ v, codec string }{
		{"0.8.2", "none"}, {"0.8.2", "snappy"}, {"0.9.0", "gzip"}, {"0.9.0", "lz4"},
		{"0.10.0", "none"}, {"0.10.0", "lz4"}, {"0.10.2", "snappy"}, {"0.11.0", "gzip"},
	}
	for _, tc := range cases {
		v, codec := tc.v, tc.codec
		{
			topic := "kc-old-" + strings.ReplaceAll(v, ".", "") + "-" + codec
			c.CreateTopic(t, topic, 1, 1)
			old := []string{"-X", "api.version.request=false", "-X", "broker.version.fallback=" + v}
			var in strings.Builder
			for i := 0; i < 20; i++ {
				fmt.Fprintf(&in, "k%d:v%d\n", i, i)
			}
			args := append([]string{"-b", bootstrap, "-P", "-t", topic, "-p", "0", "-K", ":", "-z", codec}, old...)
			runBounded(t, 20*time.Second, in.String(), kcat, args...)
			for _, reader := range [][]string{old, nil} {
				msgs := kcatJSON(t, kcat, bootstrap, topic, 0, "beginning", reader...)
				if len(msgs) != 20 {
					t.Fatalf("%s %s (reader %v): consumed %d of 20: %+v", v, codec, reader, len(msgs), msgs)
				}
				for i, m := range msgs {
					if m.Offset != int64(i) || derefOr(m.Key, "") != fmt.Sprintf("k%d", i) || derefOr(m.Payload, "") != fmt.Sprintf("v%d", i) {
						t.Fatalf("%s %s (reader %v): record %d = %+v", v, codec, reader, i, m)
					}
					// Message format v1 (0.10+) carries the producer's timestamp.
					if strings.HasPrefix(v, "0.1") && (m.TsType != "create" || m.Ts < time.Now().Add(-time.Hour).UnixMilli()) {
						t.Fatalf("%s %s (reader %v): timestamp of record %d = %s %d", v, codec, reader, i, m.TsType, m.Ts)
					}
				}
			}
			msgs := kcatJSON(t, kcat, bootstrap, topic, 0, "-1", old...)
			if len(msgs) != 1 || msgs[0].Offset != 19 {
				t.Fatalf("%s %s: -1 read %+v", v, codec, msgs)
			}
		}
	}
}

// optionalKcat finds kcat for a test with an optional kcat part: "" when
// it is missing outside CI; in CI its absence fails the test.
func optionalKcat(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("kcat is required in CI: %v", err)
		}
		t.Logf("kcat not installed, its part of the test is skipped: %v", err)
		return ""
	}
	return p
}
