package groups

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/tools/internal/tooltest"
)

// commitHandler marks and commits every message it sees and counts them.
type commitHandler struct {
	mu   sync.Mutex
	seen int
}

func (h *commitHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *commitHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *commitHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		s.MarkMessage(m, "")
		s.Commit()
		h.mu.Lock()
		h.seen++
		h.mu.Unlock()
	}
	return nil
}

func (h *commitHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen
}

func TestToolConsumerGroups(t *testing.T) {
	c := tooltest.GroupFixture(t)
	boot := c.Addr(0)
	h, stopGroup := startCommitGroup(t, c)
	checkActiveGroupDescribe(t, boot, h)
	checkActiveGroupCommands(t, boot)
	stopGroup()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		_, e, _ := runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--describe", "--group", "g1")
		if !strings.Contains(e, "Consumer group 'g1' has no active members.") {
			return fmt.Errorf("stderr %q", e)
		}
		return nil
	})
	checkInactiveGroupReset(t, c, boot)
	checkGroupDeletes(t, boot)
}

// startCommitGroup starts Sarama's consumer group g1 (client cg-client) on
// topic cg with a commitHandler, and returns the handler and the function
// that stops the group (also called at the test's end).
func startCommitGroup(t *testing.T, c *brokertest.Cluster) (*commitHandler, func()) {
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.ClientID = "cg-client"
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	group, err := sarama.NewConsumerGroup(c.Addrs(), "g1", cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &commitHandler{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := group.Consume(ctx, []string{"cg"}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				return
			}
		}
	}()
	stopGroup := func() {
		cancel()
		<-done
		group.Close()
	}
	t.Cleanup(stopGroup)
	return h, stopGroup
}

// checkActiveGroupDescribe waits until the group is Stable and both
// partitions show lag 0, then checks --describe's header and offsets.
func checkActiveGroupDescribe(t *testing.T, boot string, h *commitHandler) {
	var out string
	rowRE := regexp.MustCompile(`(?m)^g1 +cg +([01]) +(\d+) +(\d+) +0 +(\S+) +/127\.0\.0\.1 +cg-client$`)
	brokertest.WaitFor(t, 60*time.Second, func() error {
		o, errOut, code := runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--describe", "--group", "g1")
		out = o
		if code != 0 || len(rowRE.FindAllString(o, -1)) != 2 || h.count() < 5 {
			return fmt.Errorf("code %d stdout %q stderr %q", code, o, errOut)
		}
		return nil
	})
	lines := strings.Split(out, "\n")
	if lines[0] != "" || lines[1] != "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "+
		fmt.Sprintf("%-*s", len(rowRE.FindStringSubmatch(out)[4]), "CONSUMER-ID")+" HOST            CLIENT-ID" {
		t.Errorf("header: %q", out)
	}
	for _, m := range rowRE.FindAllStringSubmatch(out, -1) {
		want := map[string]string{"0": "3", "1": "2"}[m[1]]
		if m[2] != want || m[3] != want {
			t.Errorf("partition %s: offsets %s/%s, want %s", m[1], m[2], m[3], want)
		}
	}
}

// checkActiveGroupCommands checks --list, --members --verbose and --state
// of the active group, and that --reset-offsets refuses it.
func checkActiveGroupCommands(t *testing.T, boot string) {
	o, _, code := runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--list")
	if code != 0 || o != "g1\n" {
		t.Errorf("list: %d %q", code, o)
	}
	o, _, _ = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--describe", "--group", "g1", "--members", "--verbose")
	if !regexp.MustCompile(`^\nGROUP +CONSUMER-ID +HOST +CLIENT-ID +#PARTITIONS +ASSIGNMENT\ng1 +\S+ +/127\.0\.0\.1 +cg-client +2 +cg\(0,1\)\n$`).MatchString(o) {
		t.Errorf("members: %q", o)
	}
	o, _, _ = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--describe", "--group", "g1", "--state")
	if !regexp.MustCompile(`^\nGROUP +COORDINATOR \(ID\) +ASSIGNMENT-STRATEGY +STATE +#MEMBERS\ng1 +127\.0\.0\.1:\d+ \(\d+\) +range +Stable +1\n$`).MatchString(o) {
		t.Errorf("state: %q", o)
	}
	o, _, _ = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--reset-offsets", "--group", "g1", "--all-topics", "--to-earliest", "--execute")
	if !strings.HasPrefix(o, "\nError: Assignments can only be reset if the group 'g1' is inactive, but the current state is Stable.\n") {
		t.Errorf("reset of an active group: %q", o)
	}
}

// checkInactiveGroupReset resets the inactive group's offsets (checked by
// OffsetFetch and --describe), then dry runs that must change nothing.
func checkInactiveGroupReset(t *testing.T, c *brokertest.Cluster, boot string) {
	o, errOut, code := runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--reset-offsets", "--group", "g1", "--topic", "cg", "--to-earliest", "--execute")
	wantReset := "\n" + fmt.Sprintf("%-30s %-30s %-10s %-15s\n", "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") +
		fmt.Sprintf("%-30s %-30s %-10s %-15s\n", "g1", "cg", "0", "0") + fmt.Sprintf("%-30s %-30s %-10s %-15s\n", "g1", "cg", "1", "0")
	if code != 0 || o != wantReset {
		t.Fatalf("reset: code %d stderr %q stdout %q", code, errOut, o)
	}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	resp, err := admin.ListConsumerGroupOffsets("g1", map[string][]int32{"cg": {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		if b := resp.GetBlock("cg", p); b == nil || b.Offset != 0 {
			t.Errorf("OffsetFetch cg-%d after reset: %+v", p, b)
		}
	}
	o, _, _ = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--describe", "--group", "g1")
	if !regexp.MustCompile(`(?m)^g1 +cg +0 +0 +3 +3 +- +- +-$`).MatchString(o) {
		t.Errorf("describe after reset: %q", o)
	}
	// Dry runs change nothing; out-of-range offsets are clamped.
	o, _, _ = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--reset-offsets", "--group", "g1", "--topic", "cg:0", "--to-offset", "99", "--dry-run")
	if o != "\n"+fmt.Sprintf("%-30s %-30s %-10s %-15s\n", "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")+fmt.Sprintf("%-30s %-30s %-10s %-15s\n", "g1", "cg", "0", "3") {
		t.Errorf("dry run: %q", o)
	}
	o, _, _ = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--reset-offsets", "--group", "g1", "--all-topics", "--shift-by", "1")
	if !strings.HasPrefix(o, "WARN: No action will be performed as the --execute option is missing.") ||
		!regexp.MustCompile(`(?m)^g1 +cg +0 +1 +$`).MatchString(o) || !regexp.MustCompile(`(?m)^g1 +cg +1 +1 +$`).MatchString(o) {
		t.Errorf("shift-by: %q", o)
	}
	if b, err := admin.ListConsumerGroupOffsets("g1", map[string][]int32{"cg": {0}}); err != nil || b.GetBlock("cg", 0).Offset != 0 {
		t.Errorf("a dry run committed: %+v %v", b, err)
	}
}

// checkGroupDeletes deletes one partition's offsets, then the group, and
// checks that a command with two actions is refused.
func checkGroupDeletes(t *testing.T, boot string) {
	o, errOut, code := runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--delete-offsets", "--group", "g1", "--topic", "cg:1")
	if code != 0 || o != "Request succeed for deleting offsets with topic cg:1 group g1\n\n"+fmt.Sprintf("%-30s %-15s %-15s\n%-30s %-15s %-15s\n", "TOPIC", "PARTITION", "STATUS", "cg", "1", "Successful") {
		t.Errorf("delete-offsets: %d %q %q", code, o, errOut)
	}
	o, errOut, code = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--delete", "--group", "g1")
	if code != 0 || o != "Deletion of requested consumer groups ('g1') was successful.\n" {
		t.Errorf("delete: %d %q %q", code, o, errOut)
	}
	o, _, _ = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--list")
	if o != "" {
		t.Errorf("list after delete: %q", o)
	}
	o, errOut, code = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--describe", "--group", "g1")
	if code != 0 || o != "\nError: Consumer group 'g1' does not exist.\n" {
		t.Errorf("describe of a deleted group: %d %q %q", code, o, errOut)
	}
	_, errOut, code = runTool(t, "", "kafka-consumer-groups", "--bootstrap-server", boot, "--list", "--describe")
	if code != 1 || !strings.HasPrefix(errOut, "Command must include exactly one action") {
		t.Errorf("two actions: %d %q", code, errOut)
	}
}

func TestToolConsumerGroupsResetParsers(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"PT0S": 0, "P1D": 24 * time.Hour, "PT1H30M": 90 * time.Minute, "P1DT2H3M4.5S": 26*time.Hour + 3*time.Minute + 4500*time.Millisecond, "pt10s": 10 * time.Second,
	} {
		if got, err := parseJavaDuration(in); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "1D", "P1H", "PT-1S", "PT99999999999H"} {
		if _, err := parseJavaDuration(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	got, err := parseResetDatetime("2024-03-01T10:20:30.456Z")
	if err != nil || !got.Equal(time.Date(2024, 3, 1, 10, 20, 30, 456e6, time.UTC)) {
		t.Errorf("utc: %v %v", got, err)
	}
	got, err = parseResetDatetime("2024-03-01T10:20:30.456")
	if err != nil || !got.Equal(time.Date(2024, 3, 1, 10, 20, 30, 456e6, time.Local)) {
		t.Errorf("local: %v %v", got, err)
	}
	if _, err := parseResetDatetime("2024-03-01 10:20"); err == nil {
		t.Error("bad datetime accepted")
	}
}

func FuzzToolJavaDuration(f *testing.F) {
	for _, s := range []string{"PT1H", "P1DT2H3M4.5S", "P", "PT", "P99999999999D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := parseJavaDuration(s); err == nil && d < 0 {
			t.Fatalf("%q: negative %v", s, d)
		}
	})
}
