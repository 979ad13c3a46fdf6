package replicaverify

// The fetch half of kafka-replica-verification: one connection per broker,
// Fetch v11 with replica id -2 (Kafka's DebuggingConsumerId), framed with
// kmsg. A round fetches every broker in parallel; a failed fetch counts as
// empty data, as Kafka's ReplicaFetcher treats it.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/kafka"
	"samsa/tools/internal/tool"
)

const (
	rvFetchVersion   = 11
	rvDebuggingID    = -2
	rvSocketTimeout  = 30 * time.Second
	rvMaxFrameExtra  = 64 << 20 // a batch larger than --fetch-size still comes whole (KIP-74)
	rvMaxFrameCap    = 1<<31 - 1
	rvRetryBackoffMs = 100
)

// rvFetcher fetches the partitions one broker holds.
type rvFetcher struct {
	id         int32
	addr       string
	partitions []kafka.TopicPartition
	fetchSize  int32
	maxWaitMs  int32
	stderr     io.Writer

	conn   net.Conn
	corr   int32
	warned map[string]bool // "tp/code" already reported
}

func (f *rvFetcher) close() {
	if f.conn != nil {
		f.conn.Close()
		f.conn = nil
	}
}

// fetchRound fetches every broker once, in parallel, and returns
// data[tp][broker]. A broker that failed answers empty data with high
// watermark -1.
func fetchRound(ctx context.Context, fetchers map[int32]*rvFetcher, offsets map[kafka.TopicPartition]int64) map[kafka.TopicPartition]map[int32]rvReplicaData {
	type result struct {
		id   int32
		data map[kafka.TopicPartition]rvReplicaData
		err  error
	}
	results := make(chan result, len(fetchers))
	var wg sync.WaitGroup
	for id, f := range fetchers {
		req := f.request(offsets)
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := f.fetch(ctx, req)
			results <- result{id, d, err}
		}()
	}
	wg.Wait()
	close(results)
	out := map[kafka.TopicPartition]map[int32]rvReplicaData{}
	failed := false
	for r := range results {
		f := fetchers[r.id]
		if r.err != nil {
			failed = true
			f.close()
		}
		for _, tp := range f.partitions {
			if out[tp] == nil {
				out[tp] = map[int32]rvReplicaData{}
			}
			d, ok := r.data[tp]
			if !ok {
				d = rvReplicaData{highWatermark: -1}
			}
			out[tp][r.id] = d
		}
	}
	if failed {
		// Kafka's fetcher retries at once after its connect timeout; a
		// short pause keeps a down broker from spinning the loop.
		t := time.NewTimer(rvRetryBackoffMs * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return out
}

func (f *rvFetcher) request(offsets map[kafka.TopicPartition]int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = rvFetchVersion
	req.ReplicaID = rvDebuggingID
	req.MaxWaitMillis = f.maxWaitMs
	req.MinBytes = 1
	req.MaxBytes = rvMaxFrameCap
	req.SessionEpoch = -1
	byTopic := map[string]int{}
	for _, tp := range f.partitions {
		i, ok := byTopic[tp.Topic]
		if !ok {
			t := kmsg.NewFetchRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[tp.Topic] = i
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = tp.Partition
		p.FetchOffset = offsets[tp]
		p.PartitionMaxBytes = f.fetchSize
		p.LogStartOffset = -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	return req
}

// fetch sends one Fetch and returns each partition's answer; partitions
// answered with an error code get empty data and are reported once.
func (f *rvFetcher) fetch(ctx context.Context, req *kmsg.FetchRequest) (map[kafka.TopicPartition]rvReplicaData, error) {
	if f.conn == nil {
		d := net.Dialer{Timeout: rvSocketTimeout}
		c, err := d.DialContext(ctx, "tcp", f.addr)
		if err != nil {
			return nil, err
		}
		f.conn = c
	}
	conn := f.conn
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	f.conn.SetDeadline(time.Now().Add(rvSocketTimeout + time.Duration(f.maxWaitMs)*time.Millisecond))
	f.corr++
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID(replicaVerificationClientID)).AppendRequest(nil, req, f.corr)
	if _, err := f.conn.Write(frame); err != nil {
		return nil, err
	}
	var sizeBuf [4]byte
	if _, err := io.ReadFull(f.conn, sizeBuf[:]); err != nil {
		return nil, err
	}
	size := int64(int32(binary.BigEndian.Uint32(sizeBuf[:])))
	limit := min(int64(f.fetchSize)*int64(len(f.partitions))+rvMaxFrameExtra, rvMaxFrameCap)
	if size < 4 || size > limit {
		return nil, fmt.Errorf("tools: fetch response of %d bytes from broker %d (limit %d)", size, f.id, limit)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(f.conn, body); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != f.corr {
		return nil, fmt.Errorf("tools: correlation id %d from broker %d, want %d", got, f.id, f.corr)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = rvFetchVersion
	if err := resp.ReadFrom(body[4:]); err != nil {
		return nil, fmt.Errorf("tools: fetch response from broker %d: %w", f.id, err)
	}
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("tools: fetch from broker %d: %w", f.id, kerr.ErrorForCode(resp.ErrorCode))
	}
	out := map[kafka.TopicPartition]rvReplicaData{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if p.ErrorCode != 0 {
				f.warnOnce(tp, p.ErrorCode)
				out[tp] = rvReplicaData{highWatermark: -1}
				continue
			}
			out[tp] = rvReplicaData{highWatermark: p.HighWatermark, records: p.RecordBatches}
		}
	}
	return out, nil
}

func (f *rvFetcher) warnOnce(tp kafka.TopicPartition, code int16) {
	key := fmt.Sprintf("%s/%d", tp.String(), code)
	if f.warned[key] {
		return
	}
	f.warned[key] = true
	name := tool.JavaExceptionClass(code)
	fmt.Fprintf(f.stderr, "WARN Replica %d of partition %s answered the verification fetch with %s; its data cannot be compared\n", f.id, tp.String(), name)
}
