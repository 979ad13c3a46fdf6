package groups

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/kafka"
	"samsa/tools/internal/tool"
)

// topicPartitions parses "t" (every partition) or "t:0,1".
func (s *groupService) topicPartitions(spec string) (string, []int32, error) {
	topic, list, hasList := strings.Cut(spec, ":")
	if !hasList {
		ps, err := s.client.Partitions(topic)
		if err != nil {
			return "", nil, err
		}
		return topic, ps, nil
	}
	var ps []int32
	for _, item := range tool.SplitList(list) {
		n, err := strconv.ParseInt(item, 10, 32)
		if err != nil || n < 0 {
			return "", nil, tool.Errorf("Invalid partition %q in %q", item, spec)
		}
		ps = append(ps, int32(n))
	}
	return topic, ps, nil
}

// resetScope lists the partitions to reset: --all-topics means every
// partition the group has committed offsets for.
func (s *groupService) resetScope(c *cli.Context, committed map[string]map[int32]int64) ([]kafka.TopicPartition, error) {
	var out []kafka.TopicPartition
	if c.Bool("all-topics") {
		for _, t := range groupSortedKeys(committed) {
			for _, p := range sortedPartitionKeys(committed[t]) {
				out = append(out, kafka.TopicPartition{Topic: t, Partition: p})
			}
		}
		return out, nil
	}
	for _, spec := range c.StringSlice("topic") {
		t, ps, err := s.topicPartitions(spec)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out = append(out, kafka.TopicPartition{Topic: t, Partition: p})
		}
	}
	kafka.SortPartitions(out)
	return out, nil
}

var resetScenarios = []string{"to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration"}

func (s *groupService) resetOffsets(env tool.Env, groups []string, c *cli.Context) error {
	n := 0
	for _, sc := range resetScenarios {
		if c.IsSet(sc) {
			n++
		}
	}
	if n != 1 {
		return tool.Error("Option [reset-offsets] takes exactly one of these options: [to-earliest], [to-latest], [to-current], [to-offset], [shift-by], [to-datetime], [by-duration]")
	}
	if c.Bool("all-topics") == (len(c.StringSlice("topic")) > 0) {
		return tool.Error("Option [reset-offsets] takes exactly one of these options: [all-topics], [topic]")
	}
	if c.Bool("dry-run") && c.Bool("execute") {
		return tool.Error("Option [reset-offsets] takes at most one of these options: [dry-run], [execute]")
	}
	if !c.Bool("dry-run") && !c.Bool("execute") {
		fmt.Fprintln(env.Stdout, "WARN: No action will be performed as the --execute option is missing."+
			"In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. "+
			"You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.")
	}
	type plan struct {
		group string
		tps   []kafka.TopicPartition
		to    map[kafka.TopicPartition]int64
	}
	var plans []plan
	for _, g := range groups {
		d, err := s.describeGroup(g)
		if err != nil {
			return err
		}
		if d.State != "Empty" && d.State != "Dead" {
			fmt.Fprintf(env.Stdout, "\nError: Assignments can only be reset if the group '%s' is inactive, but the current state is %s.\n", g, d.State)
			plans = append(plans, plan{group: g})
			continue
		}
		committed, err := s.committed(g)
		if err != nil {
			return err
		}
		tps, err := s.resetScope(c, committed)
		if err != nil {
			return err
		}
		to := map[kafka.TopicPartition]int64{}
		for _, tp := range tps {
			off, err := s.newOffset(c, tp, committed)
			if err != nil {
				return err
			}
			to[tp] = off
		}
		if c.Bool("execute") {
			if err := s.commitOffsets(g, to); err != nil {
				return err
			}
		}
		plans = append(plans, plan{g, tps, to})
	}
	if len(plans) == 0 {
		return nil
	}
	const format = "%-30s %-30s %-10s %-15s"
	var b strings.Builder
	b.WriteString("\n" + fmt.Sprintf(format, "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") + "\n")
	for _, pl := range plans {
		for _, tp := range pl.tps {
			b.WriteString(fmt.Sprintf(format, pl.group, tp.Topic, strconv.Itoa(int(tp.Partition)), strconv.FormatInt(pl.to[tp], 10)) + "\n")
		}
	}
	fmt.Fprint(env.Stdout, b.String())
	return nil
}

// newOffset computes one partition's target offset, clamped to the log's
// range as Kafka's checkOffsetsRange does.
func (s *groupService) newOffset(c *cli.Context, tp kafka.TopicPartition, committed map[string]map[int32]int64) (int64, error) {
	earliest, err := s.client.GetOffset(tp.Topic, tp.Partition, sarama.OffsetOldest)
	if err != nil {
		return 0, err
	}
	latest, err := s.client.GetOffset(tp.Topic, tp.Partition, sarama.OffsetNewest)
	if err != nil {
		return 0, err
	}
	clamp := func(o int64) int64 { return min(max(o, earliest), latest) }
	byTime := func(t time.Time) (int64, error) {
		o, err := s.client.GetOffset(tp.Topic, tp.Partition, t.UnixMilli())
		if err != nil {
			return 0, err
		}
		if o < 0 {
			return latest, nil
		}
		return o, nil
	}
	cur, hasCur := committed[tp.Topic][tp.Partition]
	switch {
	case c.Bool("to-earliest"):
		return earliest, nil
	case c.Bool("to-latest"):
		return latest, nil
	case c.Bool("to-current"):
		if hasCur {
			return cur, nil
		}
		return latest, nil
	case c.IsSet("to-offset"):
		return clamp(c.Int64("to-offset")), nil
	case c.IsSet("shift-by"):
		if !hasCur {
			return 0, tool.Errorf("Cannot shift offset for partition %s-%d since there is no current committed offset", tp.Topic, tp.Partition)
		}
		return clamp(cur + c.Int64("shift-by")), nil
	case c.IsSet("to-datetime"):
		t, err := parseResetDatetime(c.String("to-datetime"))
		if err != nil {
			return 0, err
		}
		return byTime(t)
	default:
		d, err := parseJavaDuration(c.String("by-duration"))
		if err != nil {
			return 0, err
		}
		return byTime(time.Now().Add(-d))
	}
}

// parseResetDatetime parses yyyy-MM-dd'T'HH:mm:ss.SSS with an optional
// zone (Z or ±hh:mm); without a zone it is local time, as in Kafka.
func parseResetDatetime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05.000"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, tool.Errorf("Error parsing timestamp. It does not match the expected format 'yyyy-MM-ddTHH:mm:SS.sss': %s", s)
}

var javaDurationRE = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// parseJavaDuration parses java.time.Duration's PnDTnHnMn.nS.
func parseJavaDuration(s string) (time.Duration, error) {
	m := javaDurationRE.FindStringSubmatch(strings.ToUpper(s))
	if m == nil || s == "P" || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, tool.Errorf("Text cannot be parsed to a Duration: %s", s)
	}
	// Sum in float64 seconds so that no unit overflows time.Duration.
	var secs float64
	for i, unit := range []float64{86400, 3600, 60, 1} {
		if m[i+1] != "" {
			n, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil {
				return 0, tool.Errorf("Text cannot be parsed to a Duration: %s", s)
			}
			secs += n * unit
		}
	}
	if secs*1e9 >= float64(math.MaxInt64) {
		return 0, tool.Errorf("Text cannot be parsed to a Duration: %s", s)
	}
	d := time.Duration(secs * 1e9)
	return d, nil
}

// commitOffsets commits offsets for an inactive group (generation -1, no
// member id) at its coordinator.
func (s *groupService) commitOffsets(group string, to map[kafka.TopicPartition]int64) error {
	coord, err := s.client.Coordinator(group)
	if err != nil {
		return err
	}
	req := &sarama.OffsetCommitRequest{Version: 2, ConsumerGroup: group, ConsumerGroupGeneration: -1, RetentionTime: -1}
	for tp, off := range to {
		req.AddBlock(tp.Topic, tp.Partition, off, 0, "")
	}
	resp, err := coord.CommitOffset(req)
	if err != nil {
		return err
	}
	for t, ps := range resp.Errors {
		for p, kerr := range ps {
			if kerr != sarama.ErrNoError {
				return fmt.Errorf("tools: commit offset of %s-%d: %w", t, p, kerr)
			}
		}
	}
	return nil
}
