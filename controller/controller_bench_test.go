package controller

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// BenchmarkControllerUpdateMetadataAllPartitions: building and encoding the failover
// UpdateMetadata for 10,000 partitions and 12 brokers (the request the controller sends to
// every broker when it takes over).
func BenchmarkControllerUpdateMetadataAllPartitions(b *testing.B) {
	cc := newControllerContext(1, 1)
	for i := range int32(12) {
		cc.liveBrokers[i] = LiveBroker{ID: i, Epoch: 10, Endpoints: []Endpoint{{"PLAINTEXT", "PLAINTEXT", "host", 9092}}}
	}
	for t := range 100 {
		topic := fmt.Sprintf("topic-%d", t)
		for p := range int32(100) {
			tp := kafka.TopicPartition{Topic: topic, Partition: p}
			cc.setAssignment(tp, []int32{p % 12, (p + 1) % 12, (p + 2) % 12})
			cc.leadership[tp] = LeaderAndIsr{Leader: p % 12, Isr: []int32{p % 12, (p + 1) % 12, (p + 2) % 12}, ControllerEpoch: 1}
		}
	}
	l := logrus.New()
	l.SetOutput(io.Discard)
	b.ReportAllocs()
	var size int
	for b.Loop() {
		batch := newRequestBatch()
		batch.addUpdateMetadata([]int32{0}, cc.allPartitions())
		cs := &captureSender{}
		batch.send(cc, 0, cs, requestVersions{5, 7, 3}, l, nil)
		size = len(cs.outs[0].build(7).AppendTo(nil))
	}
	b.ReportMetric(float64(size), "bytes/request")
}

// captureSender keeps the outbound requests instead of sending them.
type captureSender struct{ outs []outbound }

func (c *captureSender) send(_ int32, o outbound)    { c.outs = append(c.outs, o) }
func (c *captureSender) interBrokerListener() string { return "" }

// BenchmarkControllerFailover measures a controller failover on a real ZooKeeper with 1,000
// partitions (100 topics × 10, replication factor 3, 3 live brokers): from the old
// controller's session closing to the new controller having sent its LeaderAndIsr requests.
func BenchmarkControllerFailover(b *testing.B) {
	cl, admin := benchCluster(b, 2, 3, 4)
	for i := range 100 {
		if err := admin.CreateTopic(fmt.Sprintf("t%03d", i), map[int32][]int32{
			0: {2, 3, 4}, 1: {3, 4, 2}, 2: {4, 2, 3}, 3: {2, 4, 3}, 4: {3, 2, 4},
			5: {4, 3, 2}, 6: {2, 3, 4}, 7: {3, 4, 2}, 8: {4, 2, 3}, 9: {2, 4, 3},
		}, nil); err != nil {
			b.Fatal(err)
		}
	}
	start := func(id int32) (*Controller, *zkutil.Client) {
		zc := benchZK(b, cl)
		c, err := New(Config{BrokerID: id, ZK: zc, Dialer: &recDialer{rec: cl.rec}, RetryBackoff: time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		return c, zc
	}
	waitLAI := func(epoch int32) {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			done := true
			for _, broker := range []int32{2, 3, 4} {
				if cl.rec.firstIndex(broker, 4, func(r kmsg.Request) bool {
					return r.(*kmsg.LeaderAndISRRequest).ControllerEpoch == epoch
				}) < 0 {
					done = false
				}
			}
			if done {
				return
			}
			time.Sleep(time.Millisecond)
		}
		b.Fatalf("no LeaderAndIsr of epoch %d", epoch)
	}
	c, zc := start(1)
	waitLAI(1)
	// Wait for every partition state before measuring.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		_ = c.sync(context.Background(), func() { n = len(c.cc.leadership) })
		if n == 1000 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d partition states", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		next, nextZK := start(int32(10 + i))
		c.Shutdown()
		zc.Close()
		waitLAI(int32(i + 2))
		c, zc = next, nextZK
	}
	b.StopTimer()
	c.Shutdown()
	zc.Close()
}

// benchCluster returns a fresh chroot on the shared ZooKeeper, with its persistent paths and
// the brokers ids registered, and the admin session that registered them.
func benchCluster(b *testing.B, ids ...int32) (*cluster, *zkutil.Client) {
	cl := &cluster{connect: zktest.Start(b).Chroot(b), rec: &recorder{}}
	admin := benchZK(b, cl)
	if err := admin.CreatePersistentPaths(); err != nil {
		b.Fatal(err)
	}
	for _, id := range ids {
		reg := zkutil.BrokerRegistration{ID: id, Version: 4, JMXPort: -1,
			Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: brokerPort(id)}}}
		if _, err := admin.RegisterBroker(reg); err != nil {
			b.Fatal(err)
		}
	}
	return cl, admin
}

func benchZK(b *testing.B, cl *cluster) *zkutil.Client {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, err := zkutil.Connect(ctx, zkutil.Config{Connect: cl.connect, SessionTimeout: 6 * time.Second, ConnectionTimeout: waitTimeout})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// BenchmarkControllerControlledShutdown measures the controller's handling of a
// ControlledShutdown on a real ZooKeeper: 3,000 partitions (30 topics × 100, replication
// factor 3, brokers 1–3, each the preferred leader of a third), broker 2 shutting down, so
// ~1,000 elections and ~2,000 ISR shrinks. Each iteration sets up a fresh cluster (untimed)
// and times ControlledShutdown from request to answer. Run it with -benchtime=Nx.
func BenchmarkControllerControlledShutdown(b *testing.B) {
	const topics, perTopic = 30, 100
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, closeAll := controlledShutdownBenchCluster(b, topics, perTopic)
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		b.StartTimer()
		remaining, err := c.ControlledShutdown(ctx, 2, -1)
		b.StopTimer()
		cancel()
		if err != nil || len(remaining) != 0 {
			b.Fatalf("controlled shutdown: remaining %d, %v", len(remaining), err)
		}
		closeAll()
	}
}

// controlledShutdownBenchCluster starts controller 1 on a fresh chroot with brokers 1, 2 and
// 3 registered and topics × perTopic partitions created, and waits until it holds every
// partition's state. closeAll stops it and closes its sessions.
func controlledShutdownBenchCluster(b *testing.B, topics, perTopic int) (c *Controller, closeAll func()) {
	cl, admin := benchCluster(b, 1, 2, 3)
	assignment := make(map[int32][]int32, perTopic)
	for p := range int32(perTopic) {
		assignment[p] = []int32{p%3 + 1, (p+1)%3 + 1, (p+2)%3 + 1}
	}
	for t := range topics {
		if err := admin.CreateTopic(fmt.Sprintf("cs%03d", t), assignment, nil); err != nil {
			b.Fatal(err)
		}
	}
	zc := benchZK(b, cl)
	c, err := New(Config{BrokerID: 1, ZK: zc, Dialer: &recDialer{rec: cl.rec}, RetryBackoff: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	closeAll = func() {
		c.Shutdown()
		zc.Close()
		admin.Close()
	}
	b.Cleanup(c.Shutdown) // after a failure below; Shutdown may run twice
	testwait.For(b, 2*time.Minute, func() error {
		var n int
		if err := c.sync(context.Background(), func() {
			if c.cc != nil {
				n = len(c.cc.leadership)
			}
		}); err != nil {
			return err
		}
		if n != topics*perTopic {
			return fmt.Errorf("%d of %d partition states", n, topics*perTopic)
		}
		return nil
	})
	return c, closeAll
}
