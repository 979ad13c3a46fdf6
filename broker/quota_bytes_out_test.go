package broker_test

import (
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestQuotaThrottledFetchNotInBytesOut: a consumer fetch over its consumer_byte_rate is
// answered empty, and, as in Kafka (which marks BytesOutPerSec from the response it sends),
// the bytes it did not send are not counted in BytesOutPerSec; an unthrottled client's fetch
// of the same data is.
func TestQuotaThrottledFetchNotInBytesOut(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	c.CreateTopic(t, "qb", 1, 1)
	c.WaitForLeader(t, "qb", 0)
	if resp := rawRoundTrip(t, c.Addr(0), "seed", brokertest.QuotaProduce(t, "qb", 1)).(*kmsg.ProduceResponse); resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("seed produce: error %d", resp.Topics[0].Partitions[0].ErrorCode)
	}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	setClientQuota(t, admin, "tiny", "consumer_byte_rate", 1)
	setClientQuota(t, admin, "probe", "producer_byte_rate", 1)
	awaitProbeThrottle(t, c, "qb", true)
	const bytesOut = `kafka_server_brokertopicmetrics_bytesoutpersec_total{topic="qb"}`
	before, err := brokertest.ScrapeValue(c, 0, bytesOut)
	if err != nil {
		t.Fatal(err)
	}

	fetch := func(clientID string) *kmsg.FetchResponse {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(11)
		req.ReplicaID = -1
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 1, 1<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "qb"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 1<<20, -1
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		return rawRoundTrip(t, c.Addr(0), clientID, req).(*kmsg.FetchResponse)
	}
	throttled := fetch("tiny")
	if throttled.ThrottleMillis <= 0 || len(throttled.Topics) != 0 {
		t.Fatalf("fetch over the quota: throttle %d ms, %d topics; want an empty throttled answer",
			throttled.ThrottleMillis, len(throttled.Topics))
	}
	if v, err := brokertest.ScrapeValue(c, 0, bytesOut); err != nil || v != before {
		t.Errorf("%s = %v (%v) after a throttled fetch, was %v", bytesOut, v, err, before)
	}

	free := fetch("free")
	if free.ThrottleMillis != 0 || len(free.Topics) != 1 || len(free.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("unthrottled fetch: throttle %d ms, %d topics", free.ThrottleMillis, len(free.Topics))
	}
	sent := float64(len(free.Topics[0].Partitions[0].RecordBatches))
	if v, err := brokertest.ScrapeValue(c, 0, bytesOut); err != nil || v != before+sent {
		t.Errorf("%s = %v (%v) after an unthrottled fetch of %v bytes, want %v", bytesOut, v, err, sent, before+sent)
	}
}
