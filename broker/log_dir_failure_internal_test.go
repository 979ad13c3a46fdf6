package broker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"samsa/config"
)

// TestAPILogDirOfflineIsFatal: a failed log dir, with or without other
// dirs online, reaches Options.OnFatal, naming the dir and the error
// (storage reports each dir once: TestStorageManagerOnDirOffline).
func TestAPILogDirOfflineIsFatal(t *testing.T) {
	cfg, _, err := config.NewBroker(map[string]string{
		"broker.id": "1", "listeners": "PLAINTEXT://127.0.0.1:0",
		"log.dirs": t.TempDir(), "zookeeper.connect": "127.0.0.1:1",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, online := range []int{0, 1} {
		fatal := make(chan error, 2)
		b, err := New(cfg, Options{OnFatal: func(err error) { fatal <- err }})
		if err != nil {
			t.Fatal(err)
		}
		diskErr := errors.New("no space left on device")
		b.logDirOffline("/data/a", diskErr, online)
		select {
		case err := <-fatal:
			if !errors.Is(err, diskErr) || !strings.Contains(err.Error(), "/data/a") {
				t.Errorf("online=%d: OnFatal(%v)", online, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("online=%d: OnFatal not called", online)
		}
	}
}
