package broker_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// BenchmarkAPIFetchIdleLongPoll measures an idle long poll (issue 18 point
// 3): a consumer fetch of 1,000 empty partitions with min_bytes 1 and
// max_wait_ms 5, which parks in the fetch purgatory and times out. ns/op is
// mostly the wait; cpu-us/op (the process's user+system CPU per fetch, broker
// and client together) is the cost of the round.
func BenchmarkAPIFetchIdleLongPoll(b *testing.B) {
	const n = 1000
	rc := benchTopic(b, brokertest.NewCluster(b, 1), "benchidle", n)
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 5, 1, 1<<20
	req.SessionID, req.SessionEpoch = 0, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "benchidle"
	for p := int32(0); p < n; p++ {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = p, 0, 1<<20, -1
		ft.Partitions = append(ft.Partitions, fp)
	}
	req.Topics = append(req.Topics, ft)
	cpu := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	idle := func() bool {
		kr, err := rc.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		r := kr.(*kmsg.FetchResponse)
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != n {
			b.Fatalf("answer %+v", r.Topics)
		}
		for _, p := range r.Topics[0].Partitions {
			if p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
				return false
			}
		}
		return true
	}
	// The topic's logs are still opening when benchTopic returns: wait
	// (bounded) until every partition answers, so their CPU is not counted.
	deadline := time.Now().Add(60 * time.Second)
	for ok := 0; ok < 20; {
		if idle() {
			ok++
		} else if time.Now().After(deadline) {
			b.Fatal("partitions never all led")
		}
	}
	b.ResetTimer()
	start := cpu()
	for i := 0; i < b.N; i++ {
		if !idle() {
			b.Fatal("an idle partition answered an error or records")
		}
	}
	b.ReportMetric(float64(cpu()-start)/1e3/float64(b.N), "cpu-us/op")
}
