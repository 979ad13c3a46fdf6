package replica

import (
	"context"
	"fmt"
	"testing"

	"samsa/broker/storage"
	"samsa/kafka"
)

// BenchmarkReplicaLeadershipWave measures one LeaderAndIsr that makes
// this broker the leader of 1,000 partitions at a new leader epoch (the
// wave a broker sees when it takes over from a failed one): each partition
// records the epoch in its leader epoch cache (in memory since issue 18;
// written before the log's recovery point passes it). The logs are real
// files in a temp dir.
//
//	go test -run XXX -bench BenchmarkReplicaLeadershipWave -benchtime 5x ./broker/replica
func BenchmarkReplicaLeadershipWave(b *testing.B) {
	const n = 1000
	logs := &dirLogs{dir: b.TempDir(), logs: map[kafka.TopicPartition]*storage.Log{}}
	m, err := New(Config{BrokerID: 1, Logs: logs, TopicConfig: func(string) (TopicConfig, error) {
		return TopicConfig{Log: storage.DefaultConfig(), MinInsyncReplicas: 1}, nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { m.Close(); logs.closeAll() }()
	wave := func(epoch int32) {
		req := LeaderAndIsr{ControllerEpoch: 1, Partitions: make([]PartitionState, n)}
		for i := range req.Partitions {
			req.Partitions[i] = PartitionState{TopicPartition: kafka.TopicPartition{Topic: "w", Partition: int32(i)},
				ControllerEpoch: 1, Leader: 1, LeaderEpoch: epoch, ISR: []int32{1}, Replicas: []int32{1, 2}}
		}
		res, err := m.BecomeLeaderOrFollower(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		for tp, err := range res {
			if err != nil {
				b.Fatalf("%s: %v", tp, err)
			}
		}
	}
	wave(0) // creates the logs
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wave(int32(i + 1))
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), fmt.Sprintf("µs/partition"))
}
