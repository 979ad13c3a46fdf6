package clustertest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/broker/brokertest"
	"samsa/broker/storage"
	"samsa/zkutil"
)

// breakLogDirOnDisk makes dir fail to load at the next start: its
// recovery point checkpoint is garbage (a dir the broker cannot read); the
// dir keeps its partitions' logs, which must not be recreated elsewhere. (A
// regular file in place of a dir: TestAPILogDirNotADirectoryStartsWithTheOthers.)
func breakLogDirOnDisk(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, storage.RecoveryPointCheckpointFile), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestClusterFault2LogDirFailsToLoad: a broker with two log dirs holds a
// replica of bd-0 in the first and of hd-0 in the second (RF 2, it leads
// both). It is stopped (the other broker takes over both), its first dir
// is made unloadable, and it is started again. As Kafka 2.8 it starts with
// the healthy dir: hd-0 rejoins the ISR, while bd-0 is not recreated in
// the healthy dir. The controller's LeaderAndIsr names it without IsNew,
// so the broker answers KAFKA_STORAGE_ERROR and the controller lists it as
// an offline replica: it stays out of the ISR, the other broker keeps
// leading it and nothing acknowledged is lost. DescribeLogDirs reports the
// broken dir as KAFKA_STORAGE_ERROR, and the broker wrote a log dir event
// notification for it. With both dirs broken the broker does not start.
func TestClusterFault2LogDirFailsToLoad(t *testing.T) {
	c := brokertest.NewProcCluster(t, 2,
		brokertest.WithProperty("zookeeper.session.timeout.ms", "3000"),
		brokertest.WithProperty("replica.lag.time.max.ms", "4000"))
	x := nonController(t, c)
	o := 1 - x
	bad := c.Property(x, "log.dirs")
	good := filepath.Join(filepath.Dir(bad), "data2")
	c.Stop(x)
	c.SetProperties(x, map[string]string{"log.dirs": bad + "," + good})
	c.Start(x)
	ids := []int32{c.ID(x), c.ID(o)}
	// New logs go to the dir with the fewest, config order breaking ties
	// (the controller's LeaderAndIsr for bd reaches the broker first).
	createTopicOn(t, c, "bd", ids)
	createTopicOn(t, c, "hd", ids)
	// The ISR is full from the creation on: wait for the logs themselves.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		for dir, tp := range map[string]string{bad: "bd-0", good: "hd-0"} {
			if _, err := os.Stat(filepath.Join(dir, tp)); err != nil {
				return fmt.Errorf("%s of broker %d not in %s: %v", tp, c.ID(x), dir, err)
			}
		}
		return nil
	})
	kb := startProducing(t, c.Addrs(), "bd", "bd", 1_000_000)
	kh := startProducing(t, c.Addrs(), "hd", "hd", 1_000_000)
	kb.waitAcks(200, 30*time.Second)
	kh.waitAcks(200, 30*time.Second)

	c.Stop(x) // controlled shutdown: the other broker leads both
	for _, topic := range []string{"bd", "hd"} {
		c.WaitForState(t, topic, 0, 30*time.Second, func(s zkutil.PartitionState) error {
			if s.Leader != c.ID(o) {
				return fmt.Errorf("%s-0: leader %d, want %d", topic, s.Leader, c.ID(o))
			}
			return nil
		})
	}
	kb.waitAcks(100, 30*time.Second)
	breakLogDirOnDisk(t, bad)
	c.Start(x)

	// The healthy dir serves: hd-0 rejoins the ISR.
	c.WaitForISR(t, "hd", 0, 2, 60*time.Second)
	// bd-0 answered KAFKA_STORAGE_ERROR to the controller, which lists the
	// replica as offline.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		off, err := offlineReplicas(c.Addr(o), "bd")
		if err != nil {
			return err
		}
		if !slices.Contains(off, c.ID(x)) {
			return fmt.Errorf("bd-0: offline replicas %v, want %d among them", off, c.ID(x))
		}
		return nil
	})
	if !strings.Contains(c.Log(x), "log dir event notification written") {
		t.Error("no log dir event notification for the dir that failed to load")
	}
	if _, err := os.Stat(filepath.Join(good, "bd-0")); !os.IsNotExist(err) {
		t.Errorf("bd-0 recreated in the healthy dir: %v", err)
	}
	if rp := brokertest.FollowerFetch(t, c.Addr(x), "bd", 11, -1, 0, -1, 0); rp.ErrorCode != kerr.KafkaStorageError.Code {
		t.Errorf("fetch bd-0 from broker %d: error %d, want KAFKA_STORAGE_ERROR", c.ID(x), rp.ErrorCode)
	}
	ld := brokertest.DescribeLogDirs(t, c.Addr(x))
	if d := ld[bad]; d.ErrorCode != kerr.KafkaStorageError.Code || len(d.Topics) != 0 {
		t.Errorf("broken dir: error %d, topics %v", d.ErrorCode, d.Topics)
	}
	if d := ld[good]; d.ErrorCode != 0 || len(d.Topics) != 1 || d.Topics[0].Topic != "hd" {
		t.Errorf("healthy dir: error %d, topics %v", d.ErrorCode, d.Topics)
	}
	// The other broker keeps leading bd-0 alone, and takes writes.
	kb.waitAcks(100, 30*time.Second)
	kh.waitAcks(100, 30*time.Second)
	if s, err := c.PartitionState("bd", 0); err != nil || s.Leader != c.ID(o) || !slices.Equal(s.ISR, []int32{c.ID(o)}) {
		t.Errorf("bd-0: leader %d, ISR %v (%v); want %d alone", s.Leader, s.ISR, err, c.ID(o))
	}
	kb.verify(c.Addrs())
	kh.verify(c.Addrs())
	if _, err := os.Stat(filepath.Join(bad, "bd-0")); err != nil {
		t.Errorf("bd-0 in the broken dir: %v", err)
	}

	// With no log dir left the start fails.
	c.Stop(x)
	breakLogDirOnDisk(t, good)
	out, err := runBroker(t, map[string]string{
		"broker.id":         fmt.Sprint(c.ID(x)),
		"listeners":         fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", c.Proc(x).Port),
		"log.dirs":          bad + "," + good,
		"zookeeper.connect": c.ZKConnect(),
	}, 60*time.Second)
	if err == nil || !strings.Contains(out, bad) || !strings.Contains(out, good) {
		t.Errorf("start with every log dir broken: %v, output:\n%s", err, out)
	}
}

// offlineReplicas returns the offline replicas of topic-0 in the metadata
// of the broker at addr.
func offlineReplicas(addr, topic string) ([]int32, error) {
	cl, err := sarama.NewClient([]string{addr}, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if err := cl.RefreshMetadata(topic); err != nil {
		return nil, err
	}
	return cl.OfflineReplicas(topic, 0)
}

// runBroker runs `samsa kafka-server-start` with props until it exits (at
// most timeout) and returns its output and exit error.
func runBroker(t *testing.T, props map[string]string, timeout time.Duration) (string, error) {
	t.Helper()
	var b strings.Builder
	for k, v := range props {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, brokertest.SamsaBinary(t), "kafka-server-start", path).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("broker still running after %v:\n%s", timeout, out)
	}
	return string(out), err
}
