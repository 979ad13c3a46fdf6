package broker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/broker/storage"
	"samsa/config"
	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// loadedBroker is offlineBroker over the given log dirs with a real
// ZooKeeper session on connect (topic configs, log dir event
// notifications), returning openLogs' error instead of failing (nil broker
// then). Start's catch-up of failed log dirs has run.
func loadedBroker(t *testing.T, connect string, dirs []string) (*Broker, error) {
	t.Helper()
	cfg, _, err := config.NewBroker(map[string]string{
		"broker.id": "1", "listeners": "PLAINTEXT://127.0.0.1:0",
		"log.dirs": strings.Join(dirs, ","), "zookeeper.connect": connect,
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, Options{OnFatal: func(err error) { t.Errorf("broker stopped: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	zc, err := zkutil.Connect(context.Background(), zkutil.Config{Connect: connect, SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	if err := zc.CreatePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	b.zk = zc
	if err := b.resolveIdentity(); err != nil { // as Start: meta.properties first
		return nil, err
	}
	if err := b.openLogs(); err != nil {
		return nil, err
	}
	newTestReplicas(t, b)
	b.replicasUp.Store(true)
	b.catchUpLogDirFailures() // as Start does
	t.Cleanup(func() {
		b.stopping.Store(true) // ends a notification still being retried
		b.replicas.Close()
		_ = b.closeLogs()
	})
	return b, nil
}

// TestAPILogDirNotADirectoryStartsWithTheOthers: as Kafka, a log dir that cannot even be
// created (a regular file where the dir should be) does not fail the start while another dir
// is usable: meta.properties is written to the usable one only, the storage manager holds the
// bad one offline (DescribeLogDirs: KAFKA_STORAGE_ERROR), the controller is notified, and new
// partitions go to the usable dir. With no usable dir the start fails naming them.
func TestAPILogDirNotADirectoryStartsWithTheOthers(t *testing.T) {
	connect := zktest.Start(t).Chroot(t)
	bad := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(bad, []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := t.TempDir()
	b, err := loadedBroker(t, connect, []string{bad, good})
	if err != nil {
		t.Fatalf("start with one of two log dirs a regular file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(good, storage.MetaPropertiesFile)); err != nil {
		t.Errorf("meta.properties in the usable dir: %v", err)
	}
	if _, ok := b.logs.OfflineDirs()[bad]; !ok {
		t.Errorf("offline dirs %v, want %s", b.logs.OfflineDirs(), bad)
	}
	ld := describeLogDirs(t, b)
	if d := ld[bad]; d.ErrorCode != kerr.KafkaStorageError.Code {
		t.Errorf("bad dir: error %d", d.ErrorCode)
	}
	waitLogDirNotified(t, b, 1)
	n0 := kafka.TopicPartition{Topic: "n"}
	if codes := leaderAndIsrIsNew(t, b, 0, true, n0); codes[n0] != 0 {
		t.Fatalf("LeaderAndIsr with IsNew: %v", codes)
	}
	if got := filepath.Dir(b.replicas.Partition(n0).Log().Dir()); got != good {
		t.Errorf("new partition in %s, want %s", got, good)
	}

	bad2 := filepath.Join(t.TempDir(), "also-a-file")
	if err := os.WriteFile(bad2, []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadedBroker(t, connect, []string{bad, bad2}); err == nil {
		t.Fatal("started with no usable log dir")
	} else if !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), bad2) {
		t.Errorf("start error does not name both dirs: %v", err)
	}
}

// waitLogDirNotified waits up to 10 s for a log dir event notification of broker id.
func waitLogDirNotified(t *testing.T, b *Broker, id int32) {
	t.Helper()
	testwait.For(t, 10*time.Second, func() error { return notifiedLogDirFailure(b, id) })
}

// notifiedLogDirFailure returns nil once a log dir event notification of
// broker id is in ZooKeeper.
func notifiedLogDirFailure(b *Broker, id int32) error {
	names, err := b.zk.GetLogDirEventNotifications()
	if err != nil {
		return err
	}
	for _, n := range names {
		if got, err := b.zk.ReadLogDirEventNotification(n); err == nil && got == id {
			return nil
		}
	}
	return fmt.Errorf("no log dir event notification for broker %d in %v", id, names)
}

// breakLogDir makes dir fail to load: its recovery point checkpoint is
// garbage.
func breakLogDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, storage.RecoveryPointCheckpointFile), []byte("not a checkpoint\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAPILogDirFailedToLoadStartsWithTheOthers: a log dir that fails to
// load no longer fails the start when another loads (Kafka 2.8, KIP-112).
// The failed dir is offline (DescribeLogDirs: KAFKA_STORAGE_ERROR) and
// receives no log; a LeaderAndIsr without IsNew for a partition whose log
// is missing (it was in the failed dir) answers KAFKA_STORAGE_ERROR and
// the partition goes offline, not recreated empty in the healthy dir; a
// log in the healthy dir opens with its data; a new replica (IsNew) is
// created in the healthy dir. With every dir failing to load the start
// fails.
func TestAPILogDirFailedToLoadStartsWithTheOthers(t *testing.T) {
	connect := zktest.Start(t).Chroot(t)
	dirs := []string{t.TempDir(), t.TempDir()}
	a0, h0 := kafka.TopicPartition{Topic: "a"}, kafka.TopicPartition{Topic: "h"}
	func() {
		b, err := loadedBroker(t, connect, dirs)
		if err != nil {
			t.Fatal(err)
		}
		leadAH(t, b)
		// New logs go to the dir with the fewest, in config order.
		for tp, dir := range map[kafka.TopicPartition]string{a0: dirs[0], h0: dirs[1]} {
			if got := filepath.Dir(b.replicas.Partition(tp).Log().Dir()); got != dir {
				t.Fatalf("%s in %s, want %s", tp, got, dir)
			}
			if _, err := b.replicas.AppendAsLeader(tp, testBatch(t, "before"), -1); err != nil {
				t.Fatal(err)
			}
		}
		b.replicas.Close()
		if err := b.closeLogs(); err != nil {
			t.Fatal(err)
		}
	}()

	breakLogDir(t, dirs[0])
	b, err := loadedBroker(t, connect, dirs)
	if err != nil {
		t.Fatalf("start with one of two log dirs failing to load: %v", err)
	}
	// Handled as any log dir failure: the controller is told.
	waitLogDirNotified(t, b, 1)
	if _, ok := b.logs.OfflineDirs()[dirs[0]]; !ok || len(b.logs.OfflineDirs()) != 1 {
		t.Fatalf("offline dirs %v, want %s", b.logs.OfflineDirs(), dirs[0])
	}
	ld := describeLogDirs(t, b)
	if d := ld[dirs[0]]; d.ErrorCode != kerr.KafkaStorageError.Code || len(d.Topics) != 0 {
		t.Errorf("failed dir: error %d, topics %v", d.ErrorCode, d.Topics)
	}
	if d := ld[dirs[1]]; d.ErrorCode != 0 || len(d.Topics) != 1 || d.Topics[0].Topic != "h" {
		t.Errorf("healthy dir: error %d, topics %v", d.ErrorCode, d.Topics)
	}

	// The controller names existing replicas without IsNew.
	n0, n1 := kafka.TopicPartition{Topic: "n"}, kafka.TopicPartition{Topic: "n", Partition: 1}
	codes := leaderAndIsrIsNew(t, b, 1, false, a0, h0, n1)
	if codes[a0] != kerr.KafkaStorageError.Code || codes[h0] != 0 || codes[n1] != kerr.KafkaStorageError.Code {
		t.Fatalf("LeaderAndIsr without IsNew: %v", codes)
	}
	for _, tp := range []kafka.TopicPartition{a0, n1} {
		if !b.replicas.IsOffline(tp) {
			t.Errorf("%s not offline", tp)
		}
		if _, err := os.Stat(filepath.Join(dirs[1], tp.String())); !os.IsNotExist(err) {
			t.Errorf("%s created in the healthy dir: %v", tp, err)
		}
		if _, ok := b.logs.Log(tp); ok {
			t.Errorf("%s has a log", tp)
		}
	}
	if _, err := b.replicas.AppendAsLeader(a0, testBatch(t, "x"), -1); b.errorCode(err) != kerr.KafkaStorageError.Code {
		t.Errorf("produce to a-0: %v", err)
	}
	if r, err := b.replicas.AppendAsLeader(h0, testBatch(t, "after"), -1); err != nil || r.BaseOffset != 1 {
		t.Errorf("produce to h-0 in the healthy dir: offset %d, %v (want 1: its record from before kept)", r.BaseOffset, err)
	}
	if codes := leaderAndIsrIsNew(t, b, 1, true, n0); codes[n0] != 0 {
		t.Fatalf("LeaderAndIsr with IsNew: %v", codes)
	}
	if got := filepath.Dir(b.replicas.Partition(n0).Log().Dir()); got != dirs[1] {
		t.Errorf("new partition in %s, want the healthy %s", got, dirs[1])
	}
	// The failed dir is left as it was for the operator.
	if _, err := os.Stat(filepath.Join(dirs[0], a0.String())); err != nil {
		t.Errorf("a-0's log in the failed dir: %v", err)
	}
	b.replicas.Close()
	if err := b.closeLogs(); err != nil {
		t.Fatal(err)
	}

	breakLogDir(t, dirs[1])
	if _, err := loadedBroker(t, connect, dirs); err == nil {
		t.Fatal("started with every log dir failing to load")
	} else if !strings.Contains(err.Error(), dirs[0]) || !strings.Contains(err.Error(), dirs[1]) {
		t.Errorf("start error %q does not name both dirs", err)
	}
}
