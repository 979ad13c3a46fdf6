package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
)

// sessionFetch sends a v12 FetchRequest with the given session id and
// epoch, fetching parts (partition → offset) of topic and forgetting
// forget.
func sessionFetch(t *testing.T, rc *brokertest.RawConn, id, epoch int32, topic string, parts map[int32]int64, forget []int32) *kmsg.FetchResponse {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 12, -1, 0, 0, 1<<20
	req.SessionID, req.SessionEpoch = id, epoch
	if len(parts) > 0 {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		for p := int32(0); p < 16; p++ {
			off, ok := parts[p]
			if !ok {
				continue
			}
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = p, off, 1<<20, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	if len(forget) > 0 {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.Partitions = topic, forget
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return resp.(*kmsg.FetchResponse)
}

// answered returns partition → (high watermark, has records) of resp.
func answered(resp *kmsg.FetchResponse) map[int32][2]int64 {
	out := map[int32][2]int64{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			has := int64(0)
			if len(rp.RecordBatches) > 0 {
				has = 1
			}
			out[rp.Partition] = [2]int64{rp.HighWatermark, has}
		}
	}
	return out
}

func oneBatch(t *testing.T, value string) []byte {
	t.Helper()
	b, err := record.Build(record.NewBuildHeader(0, time.Now().UnixMilli()),
		[]record.Record{{Value: []byte(value)}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAPIFetchSessionIncremental: KIP-227 with raw requests. A full fetch
// at epoch 0 gets a session; incremental fetches answer only partitions
// with something new; forgotten partitions are no longer answered; wrong
// epochs and unknown sessions get Kafka's top-level errors; epoch -1 is
// sessionless.
func TestAPIFetchSessionIncremental(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "fs", 3, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	all := map[int32]int64{0: 0, 1: 0, 2: 0}

	full := sessionFetch(t, rc, 0, 0, "fs", all, nil)
	if full.ErrorCode != 0 || full.SessionID == 0 || len(answered(full)) != 3 {
		t.Fatalf("full fetch: error %d session %d partitions %v", full.ErrorCode, full.SessionID, answered(full))
	}
	id := full.SessionID
	if n, ok := c.Broker(0).FetchSessionSize(id); !ok || n != 3 {
		t.Fatalf("session %d holds %d partitions (cached %v), want 3", id, n, ok)
	}

	// Nothing changed: an empty answer in the same session.
	r := sessionFetch(t, rc, id, 1, "fs", nil, nil)
	if r.ErrorCode != 0 || r.SessionID != id || len(r.Topics) != 0 {
		t.Fatalf("epoch 1: error %d session %d topics %v", r.ErrorCode, r.SessionID, answered(r))
	}

	// New data in partition 0: only it is answered, with its records.
	prc := brokertest.DialRaw(t, c.Addr(0))
	if code, _ := produceRaw(t, prc, "fs", oneBatch(t, "a")); code != 0 {
		t.Fatalf("produce: %d", code)
	}
	r = sessionFetch(t, rc, id, 2, "fs", nil, nil)
	if got := answered(r); len(got) != 1 || got[0] != [2]int64{1, 1} {
		t.Fatalf("epoch 2: answered %v, want partition 0 with HW 1 and records", got)
	}
	// The client moves partition 0's offset: nothing new to say.
	r = sessionFetch(t, rc, id, 3, "fs", map[int32]int64{0: 1}, nil)
	if got := answered(r); len(got) != 0 {
		t.Fatalf("epoch 3: answered %v, want nothing", got)
	}

	// Replays and unknown sessions.
	r = sessionFetch(t, rc, id, 3, "fs", nil, nil)
	if r.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || len(r.Topics) != 0 || r.SessionID != 0 {
		t.Fatalf("replayed epoch: error %d session %d topics %d", r.ErrorCode, r.SessionID, len(r.Topics))
	}
	r = sessionFetch(t, rc, id+1, 1, "fs", nil, nil)
	if r.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: error %d", r.ErrorCode)
	}

	// Forget partition 0; new data there is no longer answered.
	r = sessionFetch(t, rc, id, 4, "fs", nil, []int32{0})
	if len(r.Topics) != 0 || r.ErrorCode != 0 {
		t.Fatalf("epoch 4: error %d answered %v", r.ErrorCode, answered(r))
	}
	if code, _ := produceRaw(t, prc, "fs", oneBatch(t, "b")); code != 0 {
		t.Fatalf("produce: %d", code)
	}
	r = sessionFetch(t, rc, id, 5, "fs", nil, nil)
	if got := answered(r); len(got) != 0 {
		t.Fatalf("epoch 5: answered %v after forgetting partition 0", got)
	}
	if n, _ := c.Broker(0).FetchSessionSize(id); n != 2 {
		t.Fatalf("session %d holds %d partitions, want 2 after forgetting one", id, n)
	}

	// Sessionless (epoch -1) and closing the session with it.
	r = sessionFetch(t, rc, id, -1, "fs", all, nil)
	if r.SessionID != 0 || len(answered(r)) != 3 {
		t.Fatalf("sessionless: session %d answered %v", r.SessionID, answered(r))
	}
	if r = sessionFetch(t, rc, id, 6, "fs", nil, nil); r.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session: error %d", r.ErrorCode)
	}
}

// TestAPIFetchSessionSlotsZero: max.incremental.fetch.session.cache.slots=0
// answers full fetches with session id 0 (clients keep fetching in full).
func TestAPIFetchSessionSlotsZero(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("max.incremental.fetch.session.cache.slots", "0"))
	c.CreateTopic(t, "fs0", 1, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	r := sessionFetch(t, rc, 0, 0, "fs0", map[int32]int64{0: 0}, nil)
	if r.ErrorCode != 0 || r.SessionID != 0 || len(answered(r)) != 1 {
		t.Fatalf("error %d session %d answered %v", r.ErrorCode, r.SessionID, answered(r))
	}
}

// TestAPIFetchSessionClients: franz-go (sessions by default at v7+) and
// Sarama consume every record of a 4-partition topic; franz-go's consumer
// holds a session on the broker while it fetches.
func TestAPIFetchSessionClients(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "fsc", 4, 1)
	const n = 400
	p := c.SyncProducer(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	for i := 0; i < n; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "fsc", Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics("fsc"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz-go: %d of %d records", len(seen), n)
		}
		fs.EachError(func(topic string, part int32, err error) { t.Fatalf("franz-go %s-%d: %v", topic, part, err) })
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if s := c.Broker(0).FetchSessionStats(); s.Sessions < 1 || s.Partitions < 4 {
		t.Fatalf("franz-go consumer holds no session: %+v", s)
	}
	// More records while the session is incremental: still all delivered.
	for i := n; i < n+100; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "fsc", Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	for len(seen) < n+100 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz-go: %d of %d records", len(seen), n+100)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}

	sc := c.Sarama(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	cons, err := sarama.NewConsumerFromClient(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := 0
	for part := int32(0); part < 4; part++ {
		hw, err := sc.GetOffset("fsc", part, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := cons.ConsumePartition("fsc", part, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < hw; off++ {
			select {
			case <-pc.Messages():
				got++
			case err := <-pc.Errors():
				t.Fatal(err)
			case <-time.After(30 * time.Second):
				t.Fatalf("sarama partition %d stuck at %d of %d", part, off, hw)
			}
		}
		pc.Close()
	}
	if got != n+100 {
		t.Fatalf("sarama read %d records, want %d", got, n+100)
	}
}
