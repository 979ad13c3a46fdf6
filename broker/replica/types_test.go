package replica

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"samsa/kafka"
)

// TestReplicaTypesPrintEveryField: the request and result types embed
// kafka.TopicPartition, whose promoted String would print them as "t-0"
// alone in failure messages and logs; their own String prints every field.
func TestReplicaTypesPrintEveryField(t *testing.T) {
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	for _, c := range []struct {
		v    any
		want string
	}{
		{FollowerFetchResult{TopicPartition: tp, Err: errors.New("boom"), HighWatermark: 7, LogStartOffset: 2, Records: []byte{1}},
			"{TopicPartition:t-0 Err:boom HighWatermark:7 LogStartOffset:2 Records:[1]}"},
		{FollowerFetchPartition{TopicPartition: tp, FetchOffset: 5, CurrentLeaderEpoch: 3, LogStartOffset: 1, MaxBytes: 9},
			"{TopicPartition:t-0 FetchOffset:5 CurrentLeaderEpoch:3 LogStartOffset:1 MaxBytes:9}"},
		{StopPartition{TopicPartition: tp, LeaderEpoch: -2, Delete: true}, "{TopicPartition:t-0 LeaderEpoch:-2 Delete:true}"},
	} {
		if got := fmt.Sprintf("%+v", c.v); got != c.want {
			t.Errorf("%%+v = %q, want %q", got, c.want)
		}
	}
	ps := PartitionState{TopicPartition: tp, Leader: 2, LeaderEpoch: 4, ISR: []int32{2, 3}}
	got := fmt.Sprintf("%v", []PartitionState{ps})
	for _, want := range []string{"TopicPartition:t-0", "Leader:2", "LeaderEpoch:4", "ISR:[2 3]"} {
		if !strings.Contains(got, want) {
			t.Errorf("PartitionState prints %q, without %q", got, want)
		}
	}
}
