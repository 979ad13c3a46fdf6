package groups

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

// groupRow is one line of describe --offsets (Kafka's
// PartitionAssignmentState); "" prints as "-".
type groupRow struct {
	group, topic               string
	partition                  int32
	offset, logEnd, lag        string
	consumerID, host, clientID string
}

// memberRow is one line of describe --members.
type memberRow struct {
	consumerID, host, clientID string
	assignment                 map[string][]int32
}

func (m memberRow) partitions() int {
	n := 0
	for _, ps := range m.assignment {
		n += len(ps)
	}
	return n
}

func orMissing(s string) string {
	if s == "" {
		return missingColumn
	}
	return s
}

func (s *groupService) describeGroup(group string) (*sarama.GroupDescription, error) {
	ds, err := s.admin.DescribeConsumerGroups([]string{group})
	if err != nil {
		return nil, err
	}
	if len(ds) != 1 {
		return nil, fmt.Errorf("tools: DescribeGroups returned %d groups", len(ds))
	}
	if ds[0].Err != sarama.ErrNoError {
		return nil, ds[0].Err
	}
	return ds[0], nil
}

func (s *groupService) members(d *sarama.GroupDescription) []memberRow {
	var out []memberRow
	for id, m := range d.Members {
		r := memberRow{consumerID: id, host: m.ClientHost, clientID: m.ClientId, assignment: map[string][]int32{}}
		if a, err := m.GetMemberAssignment(); err == nil && a != nil {
			for t, ps := range a.Topics {
				r.assignment[t] = append([]int32(nil), ps...)
				sort.Slice(r.assignment[t], func(i, j int) bool { return r.assignment[t][i] < r.assignment[t][j] })
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].partitions() != out[j].partitions() {
			return out[i].partitions() > out[j].partitions()
		}
		return out[i].consumerID < out[j].consumerID
	})
	return out
}

// committed returns the group's committed offsets (offset >= 0 only).
func (s *groupService) committed(group string) (map[string]map[int32]int64, error) {
	resp, err := s.admin.ListConsumerGroupOffsets(group, nil)
	if err != nil {
		return nil, err
	}
	if resp.Err != sarama.ErrNoError {
		return nil, resp.Err
	}
	out := map[string]map[int32]int64{}
	for t, ps := range resp.Blocks {
		for p, b := range ps {
			if b == nil || b.Err != sarama.ErrNoError || b.Offset < 0 {
				continue
			}
			if out[t] == nil {
				out[t] = map[int32]int64{}
			}
			out[t][p] = b.Offset
		}
	}
	return out, nil
}

func (s *groupService) logEnd(topic string, p int32) (int64, bool) {
	off, err := s.client.GetOffset(topic, p, sarama.OffsetNewest)
	return off, err == nil
}

// offsetRows builds describe --offsets' rows: the members' assigned
// partitions first, then committed partitions no member owns.
func (s *groupService) offsetRows(group string, members []memberRow, committed map[string]map[int32]int64) []groupRow {
	var rows []groupRow
	row := func(topic string, p int32, m *memberRow) groupRow {
		r := groupRow{group: group, topic: topic, partition: p}
		if m != nil {
			r.consumerID, r.host, r.clientID = m.consumerID, m.host, m.clientID
		}
		off, hasOff := committed[topic][p]
		end, hasEnd := s.logEnd(topic, p)
		if hasOff {
			r.offset = strconv.FormatInt(off, 10)
		}
		if hasEnd {
			r.logEnd = strconv.FormatInt(end, 10)
		}
		if hasOff && hasEnd {
			r.lag = strconv.FormatInt(end-off, 10)
		}
		return r
	}
	assigned := map[string]map[int32]bool{}
	for i := range members {
		m := &members[i]
		for _, t := range groupSortedKeys(m.assignment) {
			for _, p := range m.assignment[t] {
				if assigned[t] == nil {
					assigned[t] = map[int32]bool{}
				}
				assigned[t][p] = true
				rows = append(rows, row(t, p, m))
			}
		}
	}
	for _, t := range groupSortedKeys(committed) {
		for _, p := range sortedPartitionKeys(committed[t]) {
			if !assigned[t][p] {
				rows = append(rows, row(t, p, nil))
			}
		}
	}
	return rows
}

func sortedPartitionKeys[V any](m map[int32]V) []int32 {
	out := make([]int32, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// shouldPrintMemberState is Kafka's: notes on stderr for empty,
// rebalancing and missing groups; true when there are rows to print.
func shouldPrintMemberState(env tool.Env, group, state string, rows int) bool {
	switch state {
	case "Dead":
		fmt.Fprintf(env.Stdout, "\nError: Consumer group '%s' does not exist.\n", group)
	case "Empty":
		fmt.Fprintf(env.Stderr, "\nConsumer group '%s' has no active members.\n", group)
	case "PreparingRebalance", "CompletingRebalance":
		fmt.Fprintf(env.Stderr, "\nWarning: Consumer group '%s' is rebalancing.\n", group)
	}
	return state != "Dead" && rows > 0
}

func (s *groupService) describe(env tool.Env, groups []string, c *cli.Context) error {
	modes := 0
	for _, m := range []string{"offsets", "members", "state"} {
		if c.Bool(m) {
			modes++
		}
	}
	if modes > 1 {
		return tool.Error("Option [describe] takes at most one of these options: [members], [offsets], [state]")
	}
	if c.Bool("verbose") && !c.Bool("members") && !c.Bool("state") {
		// Kafka's message; Samsa also accepts [state] (documented).
		return tool.Error("Option [verbose] can only be used with option [describe] and [members]")
	}
	if c.Bool("verbose") && c.Bool("state") && c.String("metrics-url") == "" {
		return tool.Error("Option [verbose] with [state] needs [metrics-url]: the brokers' metrics.listener URLs, where the rebalance reasons are served")
	}
	for _, g := range groups {
		d, err := s.describeGroup(g)
		if err != nil {
			return err
		}
		members := s.members(d)
		switch {
		case c.Bool("state"):
			if err := s.printState(env, d); err != nil {
				return err
			}
			if c.Bool("verbose") {
				if err := printRebalances(env, g, MetricsURLs(c.String("metrics-url"))); err != nil {
					return err
				}
			}
		case c.Bool("members"):
			if shouldPrintMemberState(env, g, d.State, len(members)) {
				printMembers(env, g, members, c.Bool("verbose"))
			}
		default:
			committed, err := s.committed(g)
			if err != nil {
				return err
			}
			rows := s.offsetRows(g, members, committed)
			if shouldPrintMemberState(env, g, d.State, len(rows)) {
				printOffsetRows(env, rows)
			}
		}
	}
	return nil
}

// printOffsetRows prints Kafka 2.8's describe --offsets table: every line
// starts with a newline, the widths grow with the data (at least 15).
func printOffsetRows(env tool.Env, rows []groupRow) {
	gw, tw, cw, hw := 15, 15, 15, 15
	for _, r := range rows {
		gw, tw = max(gw, len(r.group)), max(tw, len(orMissing(r.topic)))
		cw, hw = max(cw, len(orMissing(r.consumerID))), max(hw, len(orMissing(r.host)))
	}
	format := fmt.Sprintf("\n%%-%ds %%-%ds %%-10s %%-15s %%-15s %%-15s %%-%ds %%-%ds %%s", gw, tw, cw, hw)
	var b strings.Builder
	fmt.Fprintf(&b, format, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, r := range rows {
		fmt.Fprintf(&b, format, r.group, orMissing(r.topic), strconv.Itoa(int(r.partition)), orMissing(r.offset), orMissing(r.logEnd),
			orMissing(r.lag), orMissing(r.consumerID), orMissing(r.host), orMissing(r.clientID))
	}
	b.WriteString("\n")
	fmt.Fprint(env.Stdout, b.String())
}

// assignmentString is "t1(0,1),t2(3)", or "-" when empty.
func (m memberRow) assignmentString() string {
	var parts []string
	for _, t := range groupSortedKeys(m.assignment) {
		ps := make([]string, len(m.assignment[t]))
		for i, p := range m.assignment[t] {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t+"("+strings.Join(ps, ",")+")")
	}
	if len(parts) == 0 {
		return missingColumn
	}
	return strings.Join(parts, ", ")
}

func printMembers(env tool.Env, group string, members []memberRow, verbose bool) {
	gw, cw, hw, clw := max(15, len(group)), 15, 15, 15
	for _, m := range members {
		cw, hw, clw = max(cw, len(m.consumerID)), max(hw, len(m.host)), max(clw, len(m.clientID))
	}
	format := fmt.Sprintf("\n%%-%ds %%-%ds %%-%ds %%-%ds %%-15s ", gw, cw, hw, clw)
	var b strings.Builder
	fmt.Fprintf(&b, format, "GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
	if verbose {
		b.WriteString("ASSIGNMENT")
	}
	for _, m := range members {
		fmt.Fprintf(&b, format, group, m.consumerID, m.host, m.clientID, strconv.Itoa(m.partitions()))
		if verbose {
			b.WriteString(m.assignmentString())
		}
	}
	b.WriteString("\n")
	fmt.Fprint(env.Stdout, b.String())
}

func (s *groupService) printState(env tool.Env, d *sarama.GroupDescription) error {
	if !shouldPrintMemberState(env, d.GroupId, d.State, 1) {
		return nil
	}
	coord, err := s.client.Coordinator(d.GroupId)
	if err != nil {
		return err
	}
	coordinator := fmt.Sprintf("%s (%d)", coord.Addr(), coord.ID())
	format := fmt.Sprintf("\n%%-%ds %%-25s %%-20s %%-15s %%s", max(25, len(coordinator)))
	var b strings.Builder
	fmt.Fprintf(&b, format, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
	fmt.Fprintf(&b, format, d.GroupId, coordinator, d.Protocol, d.State, strconv.Itoa(len(d.Members)))
	b.WriteString("\n")
	fmt.Fprint(env.Stdout, b.String())
	return nil
}

func groupSortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printRebalances is Samsa's --describe --state --verbose addition, after
// Kafka's table (which stays byte for byte): the group's last rebalances
// with their reasons, newest last, and the storm in progress if any.
func printRebalances(env tool.Env, group string, urls []string) error {
	gr, errs := FindGroupRebalances(urls, group, 10*time.Second)
	if gr == nil {
		if len(errs) > 0 {
			return fmt.Errorf("cannot read the rebalance reasons of %s: %w", group, errors.Join(errs...))
		}
		fmt.Fprintf(env.Stdout, "\nGroup %s has no rebalance recorded by its coordinator.\n", group)
		return nil
	}
	fmt.Fprint(env.Stdout, formatRebalances(group, gr))
	return nil
}

// formatRebalances renders one group's record for printRebalances.
func formatRebalances(group string, gr *RebalanceGroup) string {
	gw := max(15, len(group))
	format := fmt.Sprintf("\n%%-%ds %%-11s %%-24s %%-26s %%s", gw)
	var b strings.Builder
	fmt.Fprintf(&b, format, "GROUP", "GENERATION", "TIME", "REASON", "DETAIL")
	for _, r := range gr.Rebalances {
		detail := r.Detail
		if r.ClientID != "" {
			detail += " (client.id " + r.ClientID + ", host " + r.ClientHost + ")"
		}
		fmt.Fprintf(&b, format, group, strconv.Itoa(int(r.Generation)), r.Time.UTC().Format("2006-01-02T15:04:05.000Z"), r.Reason, detail)
	}
	b.WriteString("\n")
	if s := gr.Storm; s != nil {
		fmt.Fprintf(&b, "\nREBALANCE STORM: %d rebalances within %v; %s; %s\n", s.Rebalances,
			time.Duration(s.WindowMs)*time.Millisecond, s.Cause, s.Advice)
	}
	return b.String()
}
