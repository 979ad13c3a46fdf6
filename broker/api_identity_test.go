package broker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"samsa/broker"
	"samsa/broker/brokertest"
	"samsa/broker/storage"
	"samsa/config"
	"samsa/zkutil"
)

// startBroker starts a broker with props on the cluster's ZooKeeper chroot
// and returns it with its Start error (the broker is shut down at cleanup).
func startBroker(t *testing.T, c *brokertest.Cluster, props map[string]string) (*broker.Broker, error) {
	t.Helper()
	base := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "zookeeper.connect": c.ZKConnect(),
		"controlled.shutdown.enable": "false"}
	for k, v := range props {
		base[k] = v
	}
	cfg, _, err := config.NewBroker(base)
	if err != nil {
		t.Fatal(err)
	}
	b, err := broker.New(cfg, broker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = b.Start(ctx)
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = b.Shutdown(sctx)
	})
	return b, err
}

// TestAPIDuplicateBrokerIDFailsStart: a second broker with a live
// broker's id waits for the registration to expire (it might be its own
// crashed predecessor), and since the holder's session stays alive it then
// fails to start with a clear error (Kafka fails at once: "broker id
// already registered").
func TestAPIDuplicateBrokerIDFailsStart(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	start := time.Now()
	_, err := startBroker(t, c, map[string]string{"broker.id": "1", "log.dirs": t.TempDir(),
		"zookeeper.session.timeout.ms": "2000"})
	if !errors.Is(err, zkutil.ErrBrokerIDExists) {
		t.Fatalf("start: %v, want ErrBrokerIDExists", err)
	}
	if !strings.Contains(err.Error(), "broker.id=1") || !strings.Contains(err.Error(), "another broker is running") {
		t.Errorf("error does not name the id and the cause: %v", err)
	}
	// The wait is session timeout plus max(2 s, timeout/3) = 4 s.
	if waited := time.Since(start); waited < 4*time.Second {
		t.Errorf("start failed after %v, before the registration could have expired", waited)
	}
	stillServes(t, c.Addr(0))
}

// TestAPIClusterIDMismatchFailsStart: a log dir whose meta.properties
// names another cluster stops the start (Kafka's
// InconsistentClusterIdException).
func TestAPIClusterIDMismatchFailsStart(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	dir := t.TempDir()
	if err := storage.WriteMetaProperties(storage.OSFS{}, dir, storage.MetaProperties{BrokerID: 7, ClusterID: "someOtherClusterIdAAAA"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err := startBroker(t, c, map[string]string{"broker.id": "7", "log.dirs": dir})
	if !errors.Is(err, storage.ErrInconsistentClusterID) {
		t.Fatalf("start: %v, want ErrInconsistentClusterID", err)
	}
}

// TestAPIGeneratedBrokerID: without broker.id the id comes from
// /brokers/seqid + reserved.broker.max.id and is kept in meta.properties,
// so a restart gets the same id.
func TestAPIGeneratedBrokerID(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	dir := t.TempDir()
	b, err := startBroker(t, c, map[string]string{"log.dirs": dir})
	if err != nil {
		t.Fatal(err)
	}
	if b.ID() <= 1000 {
		t.Fatalf("generated id %d, want > reserved.broker.max.id (1000)", b.ID())
	}
	data, err := os.ReadFile(filepath.Join(dir, "meta.properties"))
	if err != nil || !strings.Contains(string(data), "cluster.id="+c.Broker(0).ClusterID()) {
		t.Fatalf("meta.properties: %q %v", data, err)
	}
	id := b.ID()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	b2, err := startBroker(t, c, map[string]string{"log.dirs": dir})
	if err != nil {
		t.Fatal(err)
	}
	if b2.ID() != id {
		t.Fatalf("restart got id %d, want %d", b2.ID(), id)
	}
}
