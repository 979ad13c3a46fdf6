package clustertest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// tmpfsLogDir mounts a tmpfs of sizeMiB at a fresh directory (skipping the
// test where mounting is not allowed) and returns it; it is lazily
// unmounted when the test ends.
func tmpfsLogDir(t *testing.T, sizeMiB int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "samsa-fault2-disk-")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", sizeMiB), "tmpfs", dir).CombinedOutput()
	if err != nil {
		os.Remove(dir)
		t.Skipf("cannot mount a tmpfs (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", dir, err, out)
		}
		os.Remove(dir)
	})
	return dir
}

// fillTmpfs shrinks the tmpfs at dir to a few pages more than it holds
// now, so that writers fill it at once and then get ENOSPC. Writers may
// grow it between the measure and the remount, which then fails (a size
// below the usage): it is retried, a bounded number of times.
func fillTmpfs(t *testing.T, dir string) {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 50; attempt++ {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		size := (st.Blocks-st.Bfree)*uint64(st.Bsize) + 4*4096
		out, err := exec.Command("mount", "-o", fmt.Sprintf("remount,size=%d", size), dir).CombinedOutput()
		if err == nil {
			t.Logf("tmpfs %s limited to %d bytes", dir, size)
			return
		}
		lastErr = fmt.Errorf("%v: %s", err, out)
	}
	t.Fatalf("shrink tmpfs %s: %v", dir, lastErr)
}

// growTmpfs gives the tmpfs at dir room again.
func growTmpfs(t *testing.T, dir string, sizeMiB int) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", fmt.Sprintf("remount,size=%dm", sizeMiB), dir).CombinedOutput(); err != nil {
		t.Fatalf("grow tmpfs %s: %v: %s", dir, err, out)
	}
}

// TestClusterFault2LeaderDiskFull: the partition leader's only log dir
// fills up (a tmpfs shrunk to its usage) under acks=all load. The append
// that fails takes the dir offline; with no log dir left the broker must
// stop serving (Kafka halts it) so that the controller elects a follower:
// producing goes on, nothing acknowledged is lost. With room again the
// broker starts, recovers and rejoins the ISR.
func TestClusterFault2LeaderDiskFull(t *testing.T) { leaderDiskFull(t, false) }

// TestClusterFault2LeaderOneOfTwoDisksFull: as TestClusterFault2LeaderDiskFull
// with two log dirs on the leader, the partition's filling up while the
// other stays healthy (KIP-112). The broker keeps running: the full dir's
// partition goes offline there, the log dir event notification has the
// controller move its leadership (LeaderAndIsr answered
// KAFKA_STORAGE_ERROR), and a partition it leads in the healthy dir is
// still served by it. With room again and a restart its replica rejoins
// the ISR.
func TestClusterFault2LeaderOneOfTwoDisksFull(t *testing.T) { leaderDiskFull(t, true) }

func leaderDiskFull(t *testing.T, twoDirs bool) {
	c := brokertest.NewProcCluster(t, 3, faultProps()...)
	x := nonController(t, c)
	mnt := tmpfsLogDir(t, 64)
	healthy := c.Property(x, "log.dirs")
	c.Stop(x)
	dirs := filepath.Join(mnt, "data")
	if twoDirs {
		// An empty dir listed first gets the next new log.
		dirs += "," + healthy
	}
	c.SetProperties(x, map[string]string{"log.dirs": dirs})
	c.Start(x)
	ids := []int32{c.ID(x)}
	for i := 0; i < c.N(); i++ {
		if i != x {
			ids = append(ids, c.ID(i))
		}
	}
	createTopicOn(t, c, "df", ids)
	if twoDirs {
		// The tmpfs holds df-0, so the healthy dir gets the next log.
		createTopicOn(t, c, "hd", ids)
		// The ISR can be full before broker x has created the log (its LeaderAndIsr may
		// still be in flight), so wait for the directory.
		brokertest.WaitFor(t, 30*time.Second, func() error {
			if _, err := os.Stat(filepath.Join(healthy, "hd-0")); err != nil {
				return fmt.Errorf("hd-0 of broker %d not in its healthy dir: %w", c.ID(x), err)
			}
			return nil
		})
	}
	k := startProducing(t, c.Addrs(), "df", "df", 1_000_000)
	k.waitAcks(200, 30*time.Second)

	start := time.Now()
	fillTmpfs(t, mnt)
	st := waitNewLeader(t, c, "df", c.ID(x))
	t.Logf("%.1fs: leader %d after the disk of %d filled (ISR %v)", time.Since(start).Seconds(), st.Leader, c.ID(x), st.ISR)
	if !twoDirs {
		// The broker stops by itself (Kafka halts it).
		brokertest.WaitFor(t, 30*time.Second, func() error {
			if c.Running(x) {
				return fmt.Errorf("broker %d with no log dir left still runs", c.ID(x))
			}
			return nil
		})
	}
	k.waitAcks(200, 60*time.Second)
	if twoDirs {
		c.WaitForState(t, "df", 0, 30*time.Second, func(s zkutil.PartitionState) error {
			if slices.Contains(s.ISR, c.ID(x)) {
				return fmt.Errorf("df-0: ISR %v still holds the offline replica %d", s.ISR, c.ID(x))
			}
			return nil
		})
		// The broker still runs and still leads and serves hd-0.
		h := startProducing(t, c.Addrs(), "hd", "hd", 1_000_000)
		h.waitAcks(200, 30*time.Second)
		if s := c.WaitForISR(t, "hd", 0, 3, 30*time.Second); s.Leader != c.ID(x) || !c.Running(x) {
			t.Fatalf("hd-0: leader %d (want %d, running %v), ISR %v", s.Leader, c.ID(x), c.Running(x), s.ISR)
		}
		h.verify(c.Addrs())
		c.Kill(x) // its offline dir cannot be flushed or closed cleanly anyway
	}

	growTmpfs(t, mnt, 64)
	c.Start(x)
	c.WaitForISR(t, "df", 0, 3, 30*time.Second)
	k.waitAcks(100, 30*time.Second)
	k.verify(c.Addrs())
	logDirs := make([]string, c.N())
	for i := range logDirs {
		logDirs[i] = c.Property(i, "log.dirs")
	}
	logDirs[x] = filepath.Join(mnt, "data")
	waitDirsIdentical(t, logDirs, "df", 30*time.Second)
}

// waitDirsIdentical waits until the segment files of topic-partition 0 are
// byte-identical and non-empty in every log dir of dirs.
func waitDirsIdentical(t *testing.T, dirs []string, topic string, timeout time.Duration) {
	t.Helper()
	brokertest.WaitFor(t, timeout, func() error {
		ref, err := segmentFiles(t, dirs[0], topic, 0)
		if err != nil {
			return err
		}
		if len(ref) == 0 {
			return fmt.Errorf("%s holds no segments", dirs[0])
		}
		for _, d := range dirs[1:] {
			got, err := segmentFiles(t, d, topic, 0)
			if err != nil {
				return err
			}
			if err := sameSegments(ref, got); err != nil {
				return fmt.Errorf("%s vs %s: %w", d, dirs[0], err)
			}
		}
		return nil
	})
}
