package brokertest

// ProcCluster timings for measurements: a timed SIGTERM, a longer start
// wait, and timestamps read back from a broker's log.

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"samsa/kafka"
	"samsa/zkutil"
)

// StopTimed sends SIGTERM to broker i (controlled shutdown when enabled),
// waits up to timeout for it to exit, fails the test if the exit is not
// clean, and returns the time from the signal to the process's exit.
func (c *ProcCluster) StopTimed(i int, timeout time.Duration) time.Duration {
	c.t.Helper()
	start := time.Now()
	c.signal(i, syscall.SIGTERM)
	if err := c.wait(i, timeout); err != nil {
		c.t.Fatalf("brokertest: broker %d stopped with %v:\n%s", c.procs[i].ID, err, c.logTail(i, 4000))
	}
	return time.Since(start)
}

// StartWithin is Start with timeout for each of its waits (old
// registration gone, new registration, serving Metadata), for brokers
// that load many logs at start-up.
func (c *ProcCluster) StartWithin(i int, timeout time.Duration) {
	c.t.Helper()
	if c.Running(i) {
		c.t.Fatalf("brokertest: broker %d is running", c.procs[i].ID)
	}
	c.waitUnregistered(i, timeout)
	c.spawn(i)
	p := c.procs[i]
	WaitFor(c.t, timeout, func() error {
		if !c.Running(i) {
			return fmt.Errorf("broker %d exited: %s", p.ID, c.logTail(i, 2000))
		}
		_, err := c.zk.GetBroker(p.ID)
		return err
	})
	c.waitRegistered(i)
	c.waitServing(i, 1)
}

// LogTimes returns the timestamps of broker i's log lines whose message
// is msg, in order, logged at or after since (at millisecond precision).
// It reads the whole log file: call it after the event, not in a poll.
func (c *ProcCluster) LogTimes(i int, msg string, since time.Time) []time.Time {
	c.t.Helper()
	f, err := os.Open(c.procs[i].logPath)
	if err != nil {
		c.t.Fatalf("brokertest: %v", err)
	}
	defer f.Close()
	since = since.Truncate(time.Millisecond)
	want := "msg=" + quoteLogValue(msg)
	var out []time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20) // a line is bounded by 16 MiB
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, want) {
			continue
		}
		ts, ok := logLineTime(line)
		if ok && !ts.Before(since) {
			out = append(out, ts)
		}
	}
	return out
}

// quoteLogValue renders a value as logrus's text formatter does: quoted
// when it holds anything but letters, digits and -._/@^+.
func quoteLogValue(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("-._/@^+", r)) {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

// logLineTime parses the time="2006-01-02 15:04:05.000" field that the
// samsa command's text formatter writes first on every line.
func logLineTime(line string) (time.Time, bool) {
	const prefix = `time="`
	const layout = "2006-01-02 15:04:05.000"
	if !strings.HasPrefix(line, prefix) || len(line) < len(prefix)+len(layout) {
		return time.Time{}, false
	}
	ts, err := time.ParseInLocation(layout, line[len(prefix):len(prefix)+len(layout)], time.Local)
	return ts, err == nil
}

// PartitionStates reads the state znodes of every partition of topics
// (pipelined reads), keyed by topic-partition; partitions without a state
// znode are absent.
func (c *ProcCluster) PartitionStates(topics []string) (map[kafka.TopicPartition]zkutil.PartitionState, error) {
	as, err := c.zk.GetTopicAssignments(topics)
	if err != nil {
		return nil, err
	}
	var tps []kafka.TopicPartition
	for topic, a := range as {
		for p := range a.Assignment.Partitions {
			tps = append(tps, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	vs, err := c.zk.GetPartitionStates(tps)
	if err != nil {
		return nil, err
	}
	out := make(map[kafka.TopicPartition]zkutil.PartitionState, len(vs))
	for tp, v := range vs {
		out[tp] = v.State
	}
	return out, nil
}

// OpenFiles returns how many descriptors broker i's process has open
// (the entries of /proc/<pid>/fd; Linux only).
func (c *ProcCluster) OpenFiles(i int) (int, error) {
	p := c.procs[i]
	pid := p.run.Pid()
	if pid == 0 || !c.Running(i) {
		return 0, fmt.Errorf("brokertest: broker %d is not running", p.ID)
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, err
	}
	return len(ents), nil
}
