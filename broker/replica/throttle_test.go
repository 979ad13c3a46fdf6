package replica

import (
	"testing"
	"time"

	"samsa/kafka"
)

func TestReplicaThrottleTokenBucket(t *testing.T) {
	now := time.Unix(1000, 0)
	th := NewThrottle(func() time.Time { return now })
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	if th.IsThrottled(tp) || th.Available() <= 0 {
		t.Fatal("an unset throttle limits")
	}
	th.SetRate(1000)
	th.SetPartitions("t", []int32{0}, false)
	if !th.IsThrottled(tp) || th.IsThrottled(kafka.TopicPartition{Topic: "t", Partition: 1}) || th.IsThrottled(kafka.TopicPartition{Topic: "u", Partition: 0}) {
		t.Fatal("wrong partitions throttled")
	}
	if got := th.Available(); got != 1000 {
		t.Fatalf("burst %d, want 1000", got)
	}
	th.Record(3000) // one big response: 2 s of debt
	if th.Available() != 0 || th.Delay() != 2001*time.Millisecond {
		t.Fatalf("available %d delay %v", th.Available(), th.Delay())
	}
	now = now.Add(2500 * time.Millisecond)
	if got := th.Available(); got != 500 {
		t.Fatalf("after 2.5 s available %d, want 500", got)
	}
	now = now.Add(time.Hour)
	if got := th.Available(); got != 1000 {
		t.Fatalf("bucket holds %d, want at most one second (1000)", got)
	}
	th.SetPartitions("t", nil, true)
	if !th.IsThrottled(kafka.TopicPartition{Topic: "t", Partition: 7}) {
		t.Fatal(`"*" does not throttle every partition`)
	}
	th.SetRate(0)
	if th.IsThrottled(tp) {
		t.Fatal("rate 0 still throttles")
	}
}
