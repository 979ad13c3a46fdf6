package clustertest_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// activeSegment returns the path of the .log file with the highest base
// offset of topic-partition 0 in a log dir.
func activeSegment(t *testing.T, logDir, topic string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(logDir, topic+"-0", "*.log"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no segments of %s in %s (%v)", topic, logDir, err)
	}
	sort.Strings(names) // zero-padded base offsets sort numerically
	return names[len(names)-1]
}

// tearTail damages a killed broker's active segment as a crash with a
// lost page cache could: the file is cut inside its last third (most
// likely inside a batch) and extended with tail (zeros or garbage). The
// segment's offset index gets garbage appended too.
func tearTail(t *testing.T, seg string, tail []byte) {
	t.Helper()
	st, err := os.Stat(seg)
	if err != nil {
		t.Fatal(err)
	}
	cut := st.Size() * 2 / 3
	if err := os.Truncate(seg, cut+7); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(tail); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	idx := seg[:len(seg)-len(".log")] + ".index"
	g, err := os.OpenFile(idx, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644) // absent until first written (lazy index files)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Write([]byte("\xff\xff\xff\x7f\x00\x00\x00\x01garbage!")); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes cut to %d, %d bytes appended", filepath.Base(seg), st.Size(), cut+7, len(tail))
}

// TestClusterFault2TornTail: under acks=all load, the leader is SIGKILLed
// and its active segment torn (cut mid-file, zero-filled tail, garbage in
// the index); later a follower is SIGKILLed and its tail replaced by
// garbage. Each restarts: recovery drops the damaged tail, the broker
// rejoins the ISR from its peers, nothing acknowledged is lost and the
// three replicas end byte-identical.
func TestClusterFault2TornTail(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	c.CreateTopic(t, "tt", 1, 3, nil)
	k := startProducing(t, c.Addrs(), "tt", "tt", 1_000_000)
	k.waitAcks(300, 30*time.Second)

	li := killLeaderAndRestart(t, c, "tt", k, 200, 30*time.Second, func(li int) {
		tearTail(t, activeSegment(t, c.Proc(li).Dir, "tt"), make([]byte, 4096))
	})

	_, fi := followerIndex(t, c, "tt")
	c.Kill(fi)
	garbage := make([]byte, 3000)
	for i := range garbage {
		garbage[i] = byte(i*131 + 17)
	}
	tearTail(t, activeSegment(t, c.Proc(fi).Dir, "tt"), garbage)
	c.WaitForISR(t, "tt", 0, 2, 30*time.Second)
	k.waitAcks(200, 30*time.Second)
	c.Start(fi)
	c.WaitForISR(t, "tt", 0, 3, 30*time.Second)
	k.waitAcks(200, 30*time.Second)
	k.verify(c.Addrs())
	waitLogsIdentical(t, c, "tt", 0, 30*time.Second)
	for _, i := range []int{li, fi} {
		if n := countLines(c.Log(i), "panic"); n > 0 {
			t.Errorf("broker %d logged %d panics", c.ID(i), n)
		}
	}
}

func countLines(log, word string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(strings.ToLower(line), word) {
			n++
		}
	}
	return n
}
