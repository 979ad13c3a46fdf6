package clustertest_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// partitionDirs lists the partition directories of topic in the log dirs (including Kafka's "-delete" renamed ones).
func partitionDirs(dirs []string, topic string) []string {
	var out []string
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join(d, topic+"-*"))
		out = append(out, m...)
	}
	return out
}

// TestClusterDeleteWhileBrokerDown: a topic is deleted while one of its
// replicas' brokers is down; the deletion completes when that broker comes
// back, and its log dir no longer holds the topic.
func TestClusterDeleteWhileBrokerDown(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	c.CreateTopic(t, "gone", 3, 3)
	for p := int32(0); p < 3; p++ {
		c.WaitForISR(t, "gone", p, 3)
	}
	brokertest.ProduceConsume(t, c, brokertest.SaramaConfig(sarama.V2_8_0_0), "gone", 3, 30)
	down := 2
	if c.Controller() == down {
		down = 1
	}
	dirs := c.Broker(down).Config().LogDirs()
	if len(partitionDirs(dirs, "gone")) == 0 {
		t.Fatal("no partition dirs before deletion")
	}
	c.Kill(down)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err := admin.DeleteTopic("gone"); err != nil && !errors.Is(err, sarama.ErrRequestTimedOut) {
		t.Fatal(err)
	}
	zk := c.ZooKeeper(t)
	// The marker stays while a replica's broker is down.
	if ok, _, err := zk.Exists("/admin/delete_topics/gone"); err != nil || !ok {
		t.Fatalf("deletion marker missing while a replica is down (%v)", err)
	}
	c.Restart(down)
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if ok, _, err := zk.Exists("/brokers/topics/gone"); err != nil || ok {
			return fmt.Errorf("topic znode still present (%v)", err)
		}
		if ok, _, err := zk.Exists("/admin/delete_topics/gone"); err != nil || ok {
			return fmt.Errorf("marker still present (%v)", err)
		}
		if left := partitionDirs(dirs, "gone"); len(left) > 0 {
			return fmt.Errorf("restarted broker still has %v", left)
		}
		return nil
	})
}

// TestClusterDeleteAndRecreateWhileProducing: a producer keeps sending
// (with retries) while its topic is deleted and re-created with the same
// name; the new topic works, every message acknowledged for a send started
// once the new topic had a leader is in it at the acknowledged offset, and
// nothing acknowledged before the deletion reappears in it.
//
// The producer uses acks=all: an acknowledgement then means the message is
// below the leader's high watermark, which is what ListOffsets(latest) and
// consumers see. (With acks=1 the high watermark may still lag the
// acknowledged offsets by a follower fetch round when the test looks.)
func TestClusterDeleteAndRecreateWhileProducing(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	c.CreateTopic(t, "again", 1, 3)
	c.WaitForISR(t, "again", 0, 3)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Max = 50
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	cfg.Metadata.AllowAutoTopicCreation = false
	rp := &recreateProducer{p: c.SyncProducer(t, cfg)}
	rp.lastAcked.Store(-1)
	rp.wg.Add(1)
	go rp.run()
	defer func() { rp.stop.Store(true); rp.wg.Wait() }()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if rp.sent.Load() < 10 {
			return errors.New("producer not running yet")
		}
		return nil
	})
	// Sends are sequential: every index up to oldMax has finished (acked
	// into the old topic, or failed) before the deletion is requested.
	oldMax := rp.lastAcked.Load()
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err := admin.DeleteTopic("again"); err != nil {
		t.Fatal(err)
	}
	zk := c.ZooKeeper(t)
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if ok, _, err := zk.Exists("/brokers/topics/again"); err != nil || ok {
			return fmt.Errorf("topic znode still present (%v)", err)
		}
		// The controller removes the deletion marker last; CreateTopics
		// refuses the name until then (TOPIC_ALREADY_EXISTS, as Kafka).
		if ok, _, err := zk.Exists("/admin/delete_topics/again"); err != nil || ok {
			return fmt.Errorf("deletion marker still present (%v)", err)
		}
		return nil
	})
	if err := admin.CreateTopic("again", &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 3}, false); err != nil {
		t.Fatal(err)
	}
	c.WaitForLeader(t, "again", 0)
	rp.recreated.Store(true)
	brokertest.WaitFor(t, 60*time.Second, func() error {
		rp.mu.Lock()
		defer rp.mu.Unlock()
		if len(rp.fresh) < 10 {
			return fmt.Errorf("producer stuck after re-creation (%d acknowledged since)", len(rp.fresh))
		}
		return nil
	})
	rp.stop.Store(true)
	rp.wg.Wait()
	rp.mu.Lock()
	acked := slices.Clone(rp.fresh)
	rp.mu.Unlock()
	checkRecreated(t, c, acked, oldMax)
}

// recreateAck is one acknowledged send of a recreateProducer.
type recreateAck struct {
	value  string
	offset int64
}

// recreateProducer sends "0", "1", ... to topic again one at a time until
// stop (at most 100,000), across its deletion and re-creation.
type recreateProducer struct {
	p         sarama.SyncProducer
	stop      atomic.Bool
	recreated atomic.Bool  // set once the new topic has a leader
	sent      atomic.Int64 // acknowledged sends
	lastAcked atomic.Int64 // index of the last acknowledged send
	mu        sync.Mutex
	fresh     []recreateAck // acknowledged sends that started after recreated was set; guarded by mu
	wg        sync.WaitGroup
}

func (rp *recreateProducer) run() {
	defer rp.wg.Done()
	for i := 0; i < 100_000 && !rp.stop.Load(); i++ {
		started := rp.recreated.Load()
		v := fmt.Sprint(i)
		_, off, err := rp.p.SendMessage(&sarama.ProducerMessage{Topic: "again", Value: sarama.StringEncoder(v)})
		if err != nil {
			continue
		}
		rp.sent.Add(1)
		rp.lastAcked.Store(int64(i))
		if started {
			rp.mu.Lock()
			rp.fresh = append(rp.fresh, recreateAck{v, off})
			rp.mu.Unlock()
		}
	}
}

// checkRecreated: the re-created topic holds every send acknowledged after
// its re-creation at its offset, and nothing acknowledged before the
// deletion (indexes up to oldMax).
func checkRecreated(t *testing.T, c *brokertest.Cluster, acked []recreateAck, oldMax int64) {
	t.Helper()
	want := map[int64]string{}
	var end int64
	for _, a := range acked {
		want[a.offset] = a.value
		end = max(end, a.offset+1)
	}
	client := c.Sarama(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err := client.RefreshMetadata("again"); err != nil {
		t.Fatal(err)
	}
	newest, err := client.GetOffset("again", 0, sarama.OffsetNewest)
	if err != nil || newest < end {
		t.Fatalf("new topic high watermark %d (err %v), below the acknowledged offsets (up to %d)", newest, err, end-1)
	}
	got := consumeRange(t, client, "again", 0, newest)
	for off, v := range want {
		if got[off] != v {
			t.Errorf("offset %d of the new topic holds %q, the producer was acknowledged %q", off, got[off], v)
		}
	}
	for off, v := range got {
		if i, err := strconv.ParseInt(v, 10, 64); err != nil || i <= oldMax {
			t.Errorf("offset %d of the new topic holds %q, acknowledged before the deletion (up to %d)", off, v, oldMax)
		}
	}
}

// consumeRange reads offsets [0, end) of topic-partition and returns their
// values by offset.
func consumeRange(t *testing.T, client sarama.Client, topic string, partition int32, end int64) map[int64]string {
	t.Helper()
	got := map[int64]string{}
	if end <= 0 {
		return got
	}
	cons, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, partition, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for n := int64(0); n < end; n++ {
		select {
		case m := <-pc.Messages():
			got[m.Offset] = string(m.Value)
			if m.Offset+1 >= end {
				return got
			}
		case err := <-pc.Errors():
			t.Fatalf("consume %s-%d: %v", topic, partition, err)
		case <-deadline.C:
			t.Fatalf("consume %s-%d: %d of %d offsets within 30s", topic, partition, len(got), end)
		}
	}
	return got
}
