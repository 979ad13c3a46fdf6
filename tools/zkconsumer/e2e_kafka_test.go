package zkconsumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/internal/testwait"
	"samsa/zkutil"
)

// requireOffsetAPIs skips the test, and only then, when the broker does not
// advertise the group coordinator APIs that offsets.storage=kafka uses.
func requireOffsetAPIs(t *testing.T, e *e2e) {
	t.Helper()
	b := sarama.NewBroker(e.cluster.Addr(0))
	if err := b.Open(brokertest.SaramaConfig(sarama.V2_1_0_0)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	resp, err := b.ApiVersions(&sarama.ApiVersionsRequest{})
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	have := map[int16]sarama.ApiVersionsResponseKey{}
	for _, k := range resp.ApiKeys {
		have[k.ApiKey] = k
	}
	var missing []string
	for _, need := range []struct {
		key, version int16
		name         string
	}{{10, 0, "FindCoordinator"}, {8, 1, "OffsetCommit"}, {9, 1, "OffsetFetch"}} {
		k, ok := have[need.key]
		if !ok || k.MinVersion > need.version || k.MaxVersion < need.version {
			missing = append(missing, fmt.Sprintf("%s v%d (API key %d)", need.name, need.version, need.key))
		}
	}
	if len(missing) > 0 {
		t.Skipf("broker does not support %s yet: offsets.storage=kafka needs the group coordinator's offset APIs", strings.Join(missing, ", "))
	}
}

// kafkaOffset reads a committed offset with OffsetFetch v1 from the
// coordinator (-1 when none).
func kafkaOffset(t *testing.T, e *e2e, group, topic string, p int32) int64 {
	t.Helper()
	client := e.cluster.Sarama(t, nil)
	var off int64
	testwait.For(t, 30*time.Second, func() error {
		b, err := client.Coordinator(group)
		if err != nil {
			return err
		}
		req := &sarama.OffsetFetchRequest{Version: 1, ConsumerGroup: group}
		req.AddPartition(topic, p)
		resp, err := b.FetchOffset(req)
		if err != nil {
			return err
		}
		blk := resp.GetBlock(topic, p)
		if blk == nil {
			return errors.New("no block in OffsetFetch response")
		}
		if blk.Err != sarama.ErrNoError {
			return blk.Err
		}
		off = blk.Offset
		return nil
	})
	return off
}

// TestZKConsumerKafkaOffsets covers offsets.storage=kafka: commits go to the
// coordinator (OffsetCommit v1) and not to ZooKeeper; with
// dual.commit.enabled both are written and the larger one is read back.
func TestZKConsumerKafkaOffsets(t *testing.T) {
	e := newE2E(t, 1, "k", 1)
	requireOffsetAPIs(t, e)
	e.produce(t, 0, 50)
	zk := e.cluster.ZooKeeper(t)

	// Consume n messages in a fresh member of group with the given
	// storage settings, commit, close; return the first offset it saw.
	run := func(group string, dual bool, n int) int64 {
		t.Helper()
		cfg := e.config(group, "c")
		cfg.OffsetsStorage = StorageKafka
		cfg.DualCommitEnabled = dual
		c := newConnector(t, cfg)
		s := startStatic(t, c, map[string]int{"k": 1})["k"][0]
		msgs := consumeN(t, s, n)
		s.MarkDone()
		if err := c.CommitOffsets(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		return msgs[0].Offset
	}

	t.Run("kafka only", func(t *testing.T) {
		if first := run("gk", false, 10); first != 0 {
			t.Fatalf("first offset %d, want 0", first)
		}
		if got := kafkaOffset(t, e, "gk", "k", 0); got != 10 {
			t.Fatalf("kafka offset %d, want 10", got)
		}
		if _, err := zk.GetConsumerOffset("gk", "k", 0); !errors.Is(err, zkutil.ErrNoNode) {
			t.Fatalf("zookeeper offset written without dual commit: %v", err)
		}
		if first := run("gk", false, 5); first != 10 {
			t.Fatalf("restart at %d, want 10", first)
		}
	})
	t.Run("dual commit", func(t *testing.T) {
		run("gd", true, 10)
		if got := kafkaOffset(t, e, "gd", "k", 0); got != 10 {
			t.Fatalf("kafka offset %d, want 10", got)
		}
		if got, err := zk.GetConsumerOffset("gd", "k", 0); err != nil || got != 10 {
			t.Fatalf("zookeeper offset %d (%v), want 10", got, err)
		}
		// Migration read: the larger of both wins.
		if err := zk.SetConsumerOffset("gd", "k", 0, 30); err != nil {
			t.Fatal(err)
		}
		if first := run("gd", true, 1); first != 30 {
			t.Fatalf("dual read started at %d, want max(zk 30, kafka 10) = 30", first)
		}
		if err := zk.SetConsumerOffset("gd", "k", 0, 5); err != nil {
			t.Fatal(err)
		}
		if first := run("gd", true, 1); first != 31 {
			t.Fatalf("dual read started at %d, want max(zk 5, kafka 31) = 31", first)
		}
	})
}
