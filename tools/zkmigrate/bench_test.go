package zkmigrate

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// BenchmarkZKMigrate: alternate secure and unsecure runs over a chroot
// with 2,500 znodes under /brokers/topics (250 topics of 4 partitions, each
// with its state) plus Kafka's other roots, with one request in flight and
// with walkWorkers, side by side; znodes/s is the ACLs set per second.
func BenchmarkZKMigrate(b *testing.B) {
	connect := zktest.Start(b).Chroot(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	zk, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect, SessionTimeout: 10 * time.Second,
		Auth: []zkutil.Credential{{Scheme: "digest", Auth: []byte(brokerUser + ":" + brokerPass)}}})
	if err != nil {
		b.Fatal(err)
	}
	defer zk.Close()
	if err := zk.EnsurePath(zkutil.TopicsPath()); err != nil {
		b.Fatal(err)
	}
	for i := range 250 {
		topic := "t" + strconv.Itoa(i)
		ops := []zkutil.Op{zkutil.CreateOp{Path: zkutil.TopicPath(topic)}, zkutil.CreateOp{Path: zkutil.TopicPartitionsPath(topic)}}
		for p := range int32(4) {
			ops = append(ops, zkutil.CreateOp{Path: zkutil.PartitionPath(topic, p)}, zkutil.CreateOp{Path: zkutil.PartitionStatePath(topic, p)})
		}
		if _, err := zk.Multi(ops...); err != nil {
			b.Fatal(err)
		}
	}
	for _, workers := range []int{1, walkWorkers} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			m := &migrator{zk: zk, workers: workers, out: io.Discard, errOut: io.Discard}
			total := 0
			for i := 0; i < b.N; i++ {
				m.secure = i%2 == 0
				n, err := m.run()
				if err != nil {
					b.Fatal(err)
				}
				total += n
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "znodes/s")
		})
	}
}
