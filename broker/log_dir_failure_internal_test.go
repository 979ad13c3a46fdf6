package broker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"samsa/config"
)

// TestAPILogDirOfflineIsFatal: the last log dir failing (none left online)
// reaches Options.OnFatal, naming the dir and the error (storage reports
// each dir once: TestStorageManagerOnDirOffline).
func TestAPILogDirOfflineIsFatal(t *testing.T) {
	cfg, _, err := config.NewBroker(map[string]string{
		"broker.id": "1", "listeners": "PLAINTEXT://127.0.0.1:0",
		"log.dirs": t.TempDir(), "zookeeper.connect": "127.0.0.1:1",
	})
	if err != nil {
		t.Fatal(err)
	}
	fatal := make(chan error, 2)
	b, err := New(cfg, Options{OnFatal: func(err error) { fatal <- err }})
	if err != nil {
		t.Fatal(err)
	}
	diskErr := errors.New("no space left on device")
	b.logDirOffline("/data/a", diskErr, 0)
	select {
	case err := <-fatal:
		if !errors.Is(err, diskErr) || !strings.Contains(err.Error(), "/data/a") {
			t.Errorf("OnFatal(%v)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnFatal not called")
	}
}

// TestAPILogDirOfflineWithOthersOnline: a real disk error in one of two
// log dirs does not stop the broker: the storage manager's hook takes that
// dir's partition offline (KAFKA_STORAGE_ERROR from then on) and the
// partition in the other dir keeps taking appends.
func TestAPILogDirOfflineWithOthersOnline(t *testing.T) {
	b, _, fatal := offlineBroker(t)
	a0, h0 := leadAH(t, b)
	failLogDir(t, b, a0)
	waitOffline(t, b, a0)
	select {
	case err := <-fatal:
		t.Fatalf("broker stopped with a log dir left: %v", err)
	default:
	}
	if _, err := b.replicas.AppendAsLeader(h0, testBatch(t, "healthy"), -1); err != nil {
		t.Fatalf("append to the healthy dir: %v", err)
	}
}
