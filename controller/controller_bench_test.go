package controller

import (
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/sirupsen/logrus"
)

// BenchmarkControllerAssignReplicas: 1,000 partitions, rf 3, over 12 brokers in 3 racks.
func BenchmarkControllerAssignReplicas(b *testing.B) {
	brokers := make([]BrokerMeta, 12)
	for i := range brokers {
		brokers[i] = BrokerMeta{ID: int32(i), Rack: fmt.Sprintf("r%d", i%3)}
	}
	rnd := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := AssignReplicas(brokers, 1000, 3, -1, -1, rnd); err != nil {
			b.Fatal(err)
		}
	}
}

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
			tp := TopicPartition{topic, p}
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
