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
// and client together) is the cost of the round. Sessionless: every fetch
// names all 1,000 partitions.
func BenchmarkAPIFetchIdleLongPoll(b *testing.B) {
	benchIdleLongPoll(b, false)
}

// BenchmarkAPIFetchIdleSession is BenchmarkAPIFetchIdleLongPoll in a fetch
// session (KIP-227), the way followers fetch: one full fetch, then
// incremental fetches that name no partition and answer none.
func BenchmarkAPIFetchIdleSession(b *testing.B) {
	benchIdleLongPoll(b, true)
}

func benchIdleLongPoll(b *testing.B, session bool) {
	const n = 1000
	rc := benchTopic(b, brokertest.NewCluster(b, 1), "benchidle", n)
	full := kmsg.NewPtrFetchRequest()
	full.SetVersion(12)
	full.ReplicaID, full.MaxWaitMillis, full.MinBytes, full.MaxBytes = -1, 5, 1, 1<<20
	full.SessionID, full.SessionEpoch = 0, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "benchidle"
	for p := int32(0); p < n; p++ {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = p, 0, 1<<20, -1
		ft.Partitions = append(ft.Partitions, fp)
	}
	full.Topics = append(full.Topics, ft)
	fetch := func(req *kmsg.FetchRequest) *kmsg.FetchResponse {
		kr, err := rc.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		return kr.(*kmsg.FetchResponse)
	}
	// idle reports whether a sessionless fetch found every partition led
	// and empty.
	idle := func(r *kmsg.FetchResponse) bool {
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
		if idle(fetch(full)) {
			ok++
		} else if time.Now().After(deadline) {
			b.Fatal("partitions never all led")
		}
	}
	req, check := full, func(r *kmsg.FetchResponse) bool { return idle(r) }
	if session {
		full.SessionEpoch = 0
		r := fetch(full)
		if r.SessionID == 0 || !idle(r) {
			b.Fatalf("no session (%d) or not idle", r.SessionID)
		}
		inc := kmsg.NewPtrFetchRequest()
		inc.SetVersion(12)
		inc.ReplicaID, inc.MaxWaitMillis, inc.MinBytes, inc.MaxBytes = -1, 5, 1, 1<<20
		inc.SessionID, inc.SessionEpoch = r.SessionID, 1
		req, check = inc, func(r *kmsg.FetchResponse) bool {
			inc.SessionEpoch++
			return r.ErrorCode == 0 && len(r.Topics) == 0
		}
	}
	b.ResetTimer()
	start := processCPU(b)
	for i := 0; i < b.N; i++ {
		if !check(fetch(req)) {
			b.Fatal("an idle partition answered an error or records")
		}
	}
	b.ReportMetric(float64(processCPU(b)-start)/1e3/float64(b.N), "cpu-us/op")
}

// processCPU is the process's user+system CPU time in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
