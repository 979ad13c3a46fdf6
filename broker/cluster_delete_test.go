package broker_test

import (
	"errors"
	"fmt"
	"path/filepath"
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
	produceConsume(t, c, brokertest.SaramaConfig(sarama.V2_8_0_0), "gone", 3, 30)
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
// name; the new topic works and the producer's later messages land in it.
func TestClusterDeleteAndRecreateWhileProducing(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	c.CreateTopic(t, "again", 1, 3)
	c.WaitForISR(t, "again", 0, 3)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 50
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	cfg.Metadata.AllowAutoTopicCreation = false
	p := c.SyncProducer(t, cfg)
	var stop atomic.Bool
	var sent atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 100_000 && !stop.Load(); i++ {
			if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "again", Value: sarama.StringEncoder(fmt.Sprint(i))}); err == nil {
				sent.Add(1)
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if sent.Load() < 10 {
			return errors.New("producer not running yet")
		}
		return nil
	})
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
	before := sent.Load()
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if sent.Load() < before+10 {
			return fmt.Errorf("producer stuck after re-creation (%d sent)", sent.Load())
		}
		return nil
	})
	stop.Store(true)
	wg.Wait()
	// The new topic holds only what was sent after it was created.
	client := c.Sarama(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	newest, err := client.GetOffset("again", 0, sarama.OffsetNewest)
	if err != nil || newest < 10 || newest > sent.Load() {
		t.Fatalf("new topic log end %d (err %v), total sent %d", newest, err, sent.Load())
	}
}
