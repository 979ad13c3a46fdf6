package controller

import (
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A LeaderAndIsr answer with thousands of partition errors is one WARN line
// per error code (count and first partition, named from the v5 topic id),
// and one DEBUG line per partition.
func TestControllerLeaderAndIsrErrorsSummarised(t *testing.T) {
	logger, hook := test.NewNullLogger()
	logger.SetLevel(logrus.DebugLevel)
	id := [16]byte{7}
	resp := kmsg.NewPtrLeaderAndISRResponse()
	resp.Version = 5
	topic := kmsg.NewLeaderAndISRResponseTopic()
	topic.TopicID = id
	for p := int32(0); p < 1000; p++ {
		part := kmsg.NewLeaderAndISRResponseTopicPartition()
		part.Partition = p
		part.ErrorCode = kerr.StaleControllerEpoch.Code
		if p == 500 {
			part.ErrorCode = kerr.KafkaStorageError.Code
		}
		if p == 501 {
			part.ErrorCode = 0
		}
		topic.Partitions = append(topic.Partitions, part)
	}
	resp.Topics = append(resp.Topics, topic)
	logLeaderAndIsrResponse(logger, 2, resp, nil, map[[16]byte]string{id: "orders"})

	var warns []*logrus.Entry
	debugs := 0
	for _, e := range hook.AllEntries() {
		switch e.Level {
		case logrus.WarnLevel:
			warns = append(warns, e)
		case logrus.DebugLevel:
			debugs++
		}
	}
	if debugs != 999 {
		t.Fatalf("%d DEBUG lines, want one per failed partition (999)", debugs)
	}
	if len(warns) != 2 {
		t.Fatalf("%d WARN lines, want one per error code (2)", len(warns))
	}
	want := map[int]int32{998: 0, 1: 500} // count -> first partition
	for _, w := range warns {
		n, _ := w.Data["partitions"].(int)
		if first, ok := want[n]; !ok || w.Data["partition"] != first || w.Data["topic"] != "orders" {
			t.Fatalf("WARN %q %v", w.Message, w.Data)
		}
	}
}
