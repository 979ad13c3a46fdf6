package verifiable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/tools/internal/tooltest"
)

// jsonEvent is one parsed line of a verifiable tool.
type jsonEvent map[string]any

func parseEvents(t *testing.T, out string) []jsonEvent {
	t.Helper()
	var evs []jsonEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e jsonEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		if _, ok := e["timestamp"].(float64); !ok || !strings.HasPrefix(line, `{"timestamp":`) {
			t.Fatalf("no leading timestamp: %q", line)
		}
		evs = append(evs, e)
	}
	return evs
}

func eventsNamed(evs []jsonEvent, name string) []jsonEvent {
	var out []jsonEvent
	for _, e := range evs {
		if e["name"] == name {
			out = append(out, e)
		}
	}
	return out
}

func num(v any) int64 { f, _ := v.(float64); return int64(f) }

// toolDataRe: avg_throughput is a Java double that Jackson writes quoted
// when it is not finite, so a run whose sends all finish within one
// millisecond ends with "Infinity" (1000 × acked / 0), as Kafka's does.
var (
	sendSuccessRe = regexp.MustCompile(`^\{"timestamp":\d+,"name":"producer_send_success","key":(null|"\d+"),"value":"[\d.]+","topic":"[\w-]+","partition":\d+,"offset":\d+\}$`)
	toolDataRe    = regexp.MustCompile(`^\{"timestamp":\d+,"name":"tool_data","sent":\d+,"acked":\d+,"target_throughput":-?\d+,"avg_throughput":([\d.E-]+|"Infinity")\}$`)
)

func TestToolVerifiableJSON(t *testing.T) {
	e := &jsonEvents{out: &bytes.Buffer{}, now: func() time.Time { return time.UnixMilli(1700000000123) }}
	k := "k\"\\\n\x01é"
	l := e.event("record_data").nullableStr("key", &k).nullableStr("value", nil).num("offset", -1).
		array("partitions", 2, func(i int, o *jsonLine) { o.str("topic", "t").num("partition", int64(i)) }).
		double("avg", 1e7).double("nan", 0*func() float64 { return 0 }()).boolean("success", true)
	e.print(l)
	want := `{"timestamp":1700000000123,"name":"record_data","key":"k\"\\\n\u0001é","value":null,"offset":-1,"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":1}],"avg":1.0E7,"nan":0.0,"success":true}` + "\n"
	if got := e.out.(*bytes.Buffer).String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Kafka's murmur2 (Utils.murmur2 test vectors from Kafka's UtilsTest).
	for in, want := range map[string]int32{"21": -973932308, "foobar": -790332482, "a-little-bit-long-string": -985981536,
		"a-little-bit-longer-string": -1486304829, "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971, "abc": 479470107} {
		m := newMurmur2()
		m.Write([]byte(in))
		if got := int32(m.Sum32()); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestToolVerifiableArgs(t *testing.T) {
	for args, want := range map[string]string{
		"--topic t":                                          "one of the arguments --bootstrap-server --broker-list is required",
		"--broker-list h:1":                                  "argument --topic is required",
		"--topic t --broker-list h:1 --acks 2":               "argument --acks: invalid choice: '2' (choose from 0, 1, -1)",
		"--topic t --broker-list h:1 --throughput x":         "argument --throughput: could not convert 'x' to Integer",
		"--topic t --broker-list h:1 --bootstrap-server h:1": "argument --bootstrap-server: not allowed with argument --broker-list",
		"--topic t --broker-list h:1 --bogus 1":              "unrecognized arguments: '--bogus 1'",
	} {
		_, errOut, code := runTool(t, "", append([]string{"kafka-verifiable-producer"}, strings.Fields(args)...)...)
		if code != 1 || !strings.Contains(errOut, "verifiable-producer: error: "+want+"\n") {
			t.Errorf("%s: exit %d %q", args, code, errOut)
		}
	}
	_, errOut, code := runTool(t, "", "kafka-verifiable-consumer", "--topic", "t", "--group-id", "g", "--broker-list", "h:1", "--assignment-strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor")
	if code != 1 || !strings.Contains(errOut, "CooperativeStickyAssignor cannot be found") {
		t.Errorf("cooperative: exit %d %q", code, errOut)
	}
	_, errOut, code = runTool(t, "", "kafka-verifiable-consumer", "--topic", "t", "--broker-list", "h:1")
	if code != 1 || !strings.Contains(errOut, "argument --group-id is required") {
		t.Errorf("group: exit %d %q", code, errOut)
	}
}

// produceVerifiable runs the verifiable producer to completion and checks
// its events; it returns the send successes.
func produceVerifiable(t *testing.T, n int, args ...string) []jsonEvent {
	t.Helper()
	out, errOut, code := runTool(t, "", append([]string{"kafka-verifiable-producer", "--max-messages", fmt.Sprint(n)}, args...)...)
	if code != 0 {
		t.Fatalf("producer: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	t.Logf("kafka-verifiable-producer (first and last lines):\n%s\n...\n%s", strings.Join(lines[:min(3, len(lines))], "\n"), strings.Join(lines[max(len(lines)-3, 0):], "\n"))
	evs := parseEvents(t, out)
	if evs[0]["name"] != "startup_complete" || evs[len(evs)-2]["name"] != "shutdown_complete" || evs[len(evs)-1]["name"] != "tool_data" {
		t.Fatalf("event order: first %v, last %v %v", evs[0]["name"], evs[len(evs)-2]["name"], evs[len(evs)-1]["name"])
	}
	if !toolDataRe.MatchString(lines[len(lines)-1]) {
		t.Errorf("tool_data line: %s", lines[len(lines)-1])
	}
	for _, l := range lines[1 : len(lines)-2] {
		if !sendSuccessRe.MatchString(l) {
			t.Errorf("not a producer_send_success line: %s", l)
		}
	}
	td := evs[len(evs)-1]
	if num(td["sent"]) != int64(n) || num(td["acked"]) != int64(n) || num(td["target_throughput"]) != -1 {
		t.Errorf("tool_data: %v", td)
	}
	return eventsNamed(evs, "producer_send_success")
}

func TestToolVerifiableCluster(t *testing.T) {
	c := brokertest.NewCluster(t, 2, brokertest.WithProperty("offsets.topic.replication.factor", "2"))
	c.CreateTopic(t, "vt", 4, 2)
	boot := c.Addr(0) + "," + c.Addr(1)

	t.Run("producer", func(t *testing.T) { testVerifiableProducer(t, boot) })
	t.Run("producer-errors", func(t *testing.T) { testVerifiableProducerErrors(t, boot) })
	t.Run("consumer-group", func(t *testing.T) { testVerifiableConsumerGroup(t, c, boot) })
	t.Run("consumer-max-messages", func(t *testing.T) { testVerifiableConsumerMaxMessages(t, c, boot) })
}

// testVerifiableProducer: every record acknowledged once at its own offset;
// keys, value prefixes and create times as Kafka's getKey/getValue.
func testVerifiableProducer(t *testing.T, boot string) {
	const n = 300
	succ := produceVerifiable(t, n, "--topic", "vt", "--bootstrap-server", boot, "--acks", "-1")
	seenOffset, seenValue := map[string]bool{}, map[string]bool{}
	for _, e := range succ {
		if e["key"] != nil || e["topic"] != "vt" {
			t.Errorf("event %v", e)
		}
		o := fmt.Sprintf("%v-%v", e["partition"], e["offset"])
		if seenOffset[o] {
			t.Errorf("offset %s acknowledged twice", o)
		}
		seenOffset[o] = true
		seenValue[e["value"].(string)] = true
	}
	if len(succ) != n || len(seenValue) != n || !seenValue["0"] || !seenValue[fmt.Sprint(n-1)] {
		t.Fatalf("%d successes, %d distinct values", len(succ), len(seenValue))
	}
	// Keys, prefixes and create times (Kafka's getKey/getValue).
	succ = produceVerifiable(t, 5, "--topic", "vt", "--broker-list", boot, "--acks", "1", "--value-prefix", "7",
		"--repeating-keys", "2", "--message-create-time", "1600000000000")
	var got []string
	for _, e := range succ {
		got = append(got, fmt.Sprintf("%v=%v", e["key"], e["value"]))
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "0=7.0 0=7.2 0=7.4 1=7.1 1=7.3" {
		t.Errorf("keys and values: %v", got)
	}
}

// testVerifiableProducerErrors: a send to a missing topic prints Kafka's
// producer_send_error line per record and a tool_data of no acks.
func testVerifiableProducerErrors(t *testing.T, boot string) {
	out, errOut, code := runTool(t, "", "kafka-verifiable-producer", "--topic", "no-such-topic", "--bootstrap-server", boot, "--max-messages", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	errRe := regexp.MustCompile(`(?m)^\{"timestamp":\d+,"name":"producer_send_error","topic":"no-such-topic","key":null,"value":"[01]","exception":"class org\.apache\.kafka\.common\.[\w.]+","message":"[^"]+"\}$`)
	if n := len(errRe.FindAllString(out, -1)); n != 2 {
		t.Errorf("%d producer_send_error lines:\n%s", n, out)
	}
	evs := parseEvents(t, out)
	if td := evs[len(evs)-1]; num(td["sent"]) != 2 || num(td["acked"]) != 0 || td["avg_throughput"] != 0.0 {
		t.Errorf("tool_data %v", td)
	}
}

// testVerifiableConsumerGroup: two members share the partitions, consume
// every record exactly once and commit up to the end.
func testVerifiableConsumerGroup(t *testing.T, c *brokertest.Cluster, boot string) {
	c.CreateTopic(t, "vg", 4, 1)
	args := []string{"kafka-verifiable-consumer", "--bootstrap-server", boot, "--topic", "vg", "--group-id", "vgroup",
		"--session-timeout", "10000", "--reset-policy", "earliest"}
	c1 := tooltest.StartTool(t, testCommands, append(args, "--verbose")...)
	c2 := tooltest.StartTool(t, testCommands, args...)
	consumers := []*tooltest.BgTool{c1, c2}
	waitVerifiableAssignment(t, consumers)
	const n = 400
	// The producer only seeds the data here (its own subtest checks
	// it with Kafka's retries=0); with retries=0 Sarama fails a whole
	// batch with "broker not connected" when it hits a connection it
	// is still (re)opening, which made this subtest flaky once in CI.
	props := filepath.Join(t.TempDir(), "producer.properties")
	if err := os.WriteFile(props, []byte("retries=5\nretry.backoff.ms=100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	produceVerifiable(t, n, "--topic", "vg", "--bootstrap-server", boot, "--producer.config", props)
	consumed := func() int64 { return verifiableConsumed(t, consumers) }
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if got := consumed(); got < n {
			return fmt.Errorf("consumed %d of %d", got, n)
		}
		return nil
	})
	for _, cs := range consumers {
		if code := cs.Stop(t); code != 0 {
			t.Errorf("consumer exit %d: %s", code, cs.ErrOut.String())
		}
	}
	if got := consumed(); got != n {
		t.Errorf("consumed %d records, want exactly %d", got, n)
	}
	seen := map[string]bool{}
	committed := map[int64]int64{}
	for i, cs := range consumers {
		out := cs.Out.String()
		t.Logf("kafka-verifiable-consumer %d:\n%s", i, out)
		checkVerifiableConsumerEvents(t, i, out, seen, committed)
	}
	var total int64
	for _, off := range committed {
		total += off
	}
	if total != n {
		t.Errorf("committed offsets %v sum to %d, want %d", committed, total, n)
	}
}

// waitVerifiableAssignment waits for a stable assignment: both members own
// two partitions.
func waitVerifiableAssignment(t *testing.T, consumers []*tooltest.BgTool) {
	brokertest.WaitFor(t, 60*time.Second, func() error {
		owned := map[int64]int{}
		for i, cs := range consumers {
			a := eventsNamed(parseEvents(t, cs.Out.String()), "partitions_assigned")
			if len(a) == 0 {
				return fmt.Errorf("consumer %d has no assignment", i)
			}
			parts := a[len(a)-1]["partitions"].([]any)
			if len(parts) != 2 {
				return fmt.Errorf("consumer %d owns %d partitions", i, len(parts))
			}
			for _, p := range parts {
				owned[num(p.(map[string]any)["partition"])]++
			}
		}
		if len(owned) != 4 {
			return fmt.Errorf("owned %v", owned)
		}
		return nil
	})
}

// verifiableConsumed sums the counts of the consumers' records_consumed
// events so far.
func verifiableConsumed(t *testing.T, consumers []*tooltest.BgTool) int64 {
	var sum int64
	for _, cs := range consumers {
		for _, e := range eventsNamed(parseEvents(t, cs.Out.String()), "records_consumed") {
			for _, p := range e["partitions"].([]any) {
				sum += num(p.(map[string]any)["count"])
			}
		}
	}
	return sum
}

// checkVerifiableConsumerEvents checks one consumer's event stream: start
// and shutdown events, contiguous records_consumed summaries (adding each
// offset to seen, which must not hold it yet), one successful commit per
// poll (the highest offset per partition into committed), record_data with
// --verbose (consumer 0) and Kafka's layout.
func checkVerifiableConsumerEvents(t *testing.T, i int, out string, seen map[string]bool, committed map[int64]int64) {
	evs := parseEvents(t, out)
	if evs[0]["name"] != "startup_complete" || evs[len(evs)-1]["name"] != "shutdown_complete" {
		t.Errorf("consumer %d: first %v last %v", i, evs[0]["name"], evs[len(evs)-1]["name"])
	}
	for _, e := range eventsNamed(evs, "records_consumed") {
		for _, p := range e["partitions"].([]any) {
			m := p.(map[string]any)
			lo, hi, cnt := num(m["minOffset"]), num(m["maxOffset"]), num(m["count"])
			if hi-lo+1 != cnt || m["topic"] != "vg" {
				t.Errorf("summary %v", m)
			}
			for o := lo; o <= hi; o++ {
				k := fmt.Sprintf("%d-%d", num(m["partition"]), o)
				if seen[k] {
					t.Errorf("%s consumed twice", k)
				}
				seen[k] = true
			}
		}
	}
	commits := eventsNamed(evs, "offsets_committed")
	if len(commits) == 0 || len(commits) != len(eventsNamed(evs, "records_consumed")) {
		t.Errorf("consumer %d: %d commits for %d polls", i, len(commits), len(eventsNamed(evs, "records_consumed")))
	}
	for _, e := range commits {
		if e["success"] != true || e["error"] != nil {
			t.Errorf("commit failed: %v", e)
		}
		for _, p := range e["offsets"].([]any) {
			m := p.(map[string]any)
			committed[num(m["partition"])] = max(committed[num(m["partition"])], num(m["offset"]))
		}
	}
	if i == 0 && len(eventsNamed(evs, "record_data")) == 0 {
		t.Error("--verbose printed no record_data")
	}
	if strings.Contains(out, `"name":"records_consumed"`) && !regexp.MustCompile(`"partitions":\[\{"topic":"vg","partition":\d+,"count":\d+,"minOffset":\d+,"maxOffset":\d+\}`).MatchString(out) {
		t.Errorf("records_consumed layout: %s", out)
	}
}

// testVerifiableConsumerMaxMessages: --max-messages stops after revoking; a
// refused session timeout and --reset-policy none end the run as Kafka's.
func testVerifiableConsumerMaxMessages(t *testing.T, c *brokertest.Cluster, boot string) {
	c.CreateTopic(t, "vm", 4, 1)
	produceVerifiable(t, 60, "--topic", "vm", "--bootstrap-server", boot)
	out, errOut, code := runTool(t, "", "kafka-verifiable-consumer", "--broker-list", boot, "--topic", "vm", "--group-id", "vmax",
		"--max-messages", "50", "--session-timeout", "10000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	var sum int64
	for _, e := range eventsNamed(evs, "records_consumed") {
		for _, p := range e["partitions"].([]any) {
			sum += num(p.(map[string]any)["count"])
		}
	}
	revoked := eventsNamed(evs, "partitions_revoked")
	if sum != 50 || len(revoked) == 0 || evs[len(evs)-1]["name"] != "shutdown_complete" || evs[len(evs)-2]["name"] != "partitions_revoked" {
		t.Errorf("sum %d, events:\n%s", sum, out)
	}
	// A session timeout the broker refuses ends the run (Kafka's poll
	// throws InvalidSessionTimeoutException).
	out, errOut, code = runTool(t, "", "kafka-verifiable-consumer", "--broker-list", boot, "--topic", "vm", "--group-id", "vshort",
		"--session-timeout", "1000")
	evs = parseEvents(t, out)
	if code != 0 || !strings.Contains(errOut, "org.apache.kafka.common.errors.InvalidSessionTimeoutException") || evs[len(evs)-1]["name"] != "shutdown_complete" {
		t.Errorf("short session: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	// A group with no committed offsets and --reset-policy none stops
	// as Kafka's NoOffsetForPartitionException does.
	out, errOut, code = runTool(t, "", "kafka-verifiable-consumer", "--broker-list", boot, "--topic", "vm", "--group-id", "vnone",
		"--reset-policy", "none", "--session-timeout", "10000")
	evs = parseEvents(t, out)
	if code != 0 || !strings.Contains(errOut, "Undefined offset with no reset policy for partitions: [vm-0, vm-1, vm-2, vm-3]") ||
		len(eventsNamed(evs, "records_consumed")) != 0 || evs[len(evs)-1]["name"] != "shutdown_complete" {
		t.Errorf("none: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
}

func FuzzToolVerifiableJSONQuote(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x00\x1f\n\t", "é\u2028", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := jacksonQuote(s)
		var back string
		if err := json.Unmarshal([]byte(q), &back); err != nil {
			t.Fatalf("%q quoted as %s: %v", s, q, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want {
			t.Fatalf("%q round-tripped to %q", want, back)
		}
	})
}
