package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// throughput is one measured run: records and payload MiB per second.
type throughput struct {
	Records float64
	MiB     float64
}

// kgoProducerOpts are the franz-go settings of every producer run: the
// client's defaults (10 ms linger, 1 MB batches) except that idempotence is
// off (as in Sarama and Kafka 2.8's producer defaults) and up to 5 requests
// are in flight per broker (Kafka's max.in.flight.requests.per.connection).
func kgoProducerOpts(topic string, acks string) []kgo.Opt {
	a := kgo.LeaderAck()
	if acks == "all" {
		a = kgo.AllISRAcks()
	}
	return []kgo.Opt{
		kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(a), kgo.DisableIdempotentWrite(),
		kgo.MaxProduceRequestsInflightPerBroker(5), kgo.ProducerBatchCompression(kgo.NoCompression()),
	}
}

// kgoProduce sends n records of size bytes to topic and waits for every
// acknowledgement.
func kgoProduce(ctx context.Context, c *cluster, topic string, n, size int, acks string, timeout time.Duration, extra ...kgo.Opt) (throughput, error) {
	cl, err := c.client(append(kgoProducerOpts(topic, acks), extra...)...)
	if err != nil {
		return throughput{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte('A' + i%26)
	}
	var failed atomic.Int64
	var firstErr atomic.Value
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			if failed.Add(1) == 1 {
				firstErr.Store(err)
			}
		}
	}
	start := time.Now()
	for range n {
		cl.Produce(ctx, &kgo.Record{Value: payload}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		return throughput{}, fmt.Errorf("bench: kgo flush: %w", err)
	}
	secs := time.Since(start).Seconds()
	if f := failed.Load(); f > 0 {
		return throughput{}, fmt.Errorf("bench: kgo: %d of %d records failed, first: %v", f, n, firstErr.Load())
	}
	return throughput{Records: float64(n) / secs, MiB: float64(n) * float64(size) / (1 << 20) / secs}, nil
}

// roundRobin spreads records over every partition (the memory test).
func roundRobin() kgo.Opt { return kgo.RecordPartitioner(kgo.RoundRobinPartitioner()) }

// kgoConsume reads n records of topic from the start of every partition
// (no consumer group) and reports the rate from the first poll to the last
// record. MiB counts key and value bytes, as Kafka's consumer perf tool.
func kgoConsume(ctx context.Context, c *cluster, topic string, n int, timeout time.Duration, extra ...kgo.Opt) (throughput, error) {
	cl, err := c.client(append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, extra...)...)
	if err != nil {
		return throughput{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var got, bytes int64
	start := time.Now()
	for got < int64(n) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return throughput{}, fmt.Errorf("bench: kgo consume: %d of %d records before the timeout", got, n)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return throughput{}, fmt.Errorf("bench: kgo consume: %v", errs[0].Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			bytes += int64(len(r.Key) + len(r.Value))
		})
	}
	secs := time.Since(start).Seconds()
	return throughput{Records: float64(got) / secs, MiB: float64(bytes) / (1 << 20) / secs}, nil
}

// latency holds end-to-end percentiles in milliseconds.
type latency struct {
	P50, P99, P999 float64
	Sent, Received int
}

// kgoE2E produces 100-byte records at rate per second for d (after a
// warm-up record went through) and measures, for each, the time from the
// Produce call to its arrival at a consumer reading the topic's tail. The
// send time travels in the payload; producer and consumer share this
// process's clock.
func kgoE2E(ctx context.Context, c *cluster, topic string, acks string, rate int, d time.Duration, extra ...kgo.Opt) (latency, error) {
	opts := append(append(kgoProducerOpts(topic, acks), kgo.ProducerLinger(0)), extra...)
	prod, err := c.client(opts...)
	if err != nil {
		return latency{}, err
	}
	defer prod.Close()
	cons, err := c.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return latency{}, err
	}
	defer cons.Close()
	ctx, cancel := context.WithTimeout(ctx, d+60*time.Second)
	defer cancel()

	ec := &e2eConsumer{cl: cons, warm: make(chan struct{}), done: make(chan error, 1)}
	ec.want.Store(-1)
	go ec.run(ctx)
	if err := e2eWarmUp(ctx, prod, ec.warm); err != nil {
		return latency{}, err
	}
	total, failed := e2eSend(ctx, prod, rate, d)
	if err := prod.Flush(ctx); err != nil {
		return latency{}, fmt.Errorf("bench: e2e flush: %w", err)
	}
	ec.want.Store(int64(total) - failed)
	select {
	case err := <-ec.done:
		if err != nil {
			return latency{}, fmt.Errorf("bench: e2e consumer: %w", err)
		}
	case <-time.After(30 * time.Second):
		cancel()
		return latency{}, errors.New("bench: e2e: records missing after 30s")
	}
	ec.mu.Lock()
	defer ec.mu.Unlock()
	l := percentiles(ec.lat)
	l.Sent, l.Received = total, len(ec.lat)
	return l, nil
}

// e2eConsumer is kgoE2E's consumer at the topic's tail. It closes warm at
// the first warm-up record, keeps each measured record's latency, and
// sends on done once want (set when the producer is done; -1 before) records
// arrived, or the context's error.
type e2eConsumer struct {
	cl       *kgo.Client
	warm     chan struct{}
	warmOnce sync.Once
	done     chan error
	want     atomic.Int64

	mu  sync.Mutex
	lat []time.Duration
}

func (e *e2eConsumer) run(ctx context.Context) {
	var got int64
	for {
		// Short polls, so that the end condition is seen even
		// when no record follows the last one.
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := e.cl.PollFetches(pctx)
		pcancel()
		now := time.Now()
		if ctx.Err() != nil {
			e.done <- ctx.Err()
			return
		}
		fs.EachRecord(func(r *kgo.Record) {
			if len(r.Value) < 9 {
				return
			}
			if r.Value[8] == 'W' {
				e.warmOnce.Do(func() { close(e.warm) })
				return
			}
			sent := time.Unix(0, int64(binary.BigEndian.Uint64(r.Value)))
			e.mu.Lock()
			e.lat = append(e.lat, now.Sub(sent))
			e.mu.Unlock()
			got++
		})
		if w := e.want.Load(); w >= 0 && got >= w {
			e.done <- nil
			return
		}
	}
}

// e2ePayload is a 100-byte record value: the send time in nanoseconds,
// then a tag ('W' warm-up, 'M' measured).
func e2ePayload(tag byte) []byte {
	p := make([]byte, 100)
	binary.BigEndian.PutUint64(p, uint64(time.Now().UnixNano()))
	p[8] = tag
	return p
}

// e2eWarmUp produces warm-up records until one reaches the consumer: it
// has found the tail once a record produced after it started arrives.
func e2eWarmUp(ctx context.Context, prod *kgo.Client, warm <-chan struct{}) error {
	warmDeadline := time.Now().Add(30 * time.Second)
	for {
		prod.Produce(ctx, &kgo.Record{Value: e2ePayload('W')}, nil)
		select {
		case <-warm:
			return nil
		case <-time.After(200 * time.Millisecond):
			if time.Now().After(warmDeadline) {
				return errors.New("bench: e2e: the consumer never saw a warm-up record")
			}
		}
	}
}

// e2eSend produces rate measured records per second for d, each at its
// due time, and returns how many it sent and how many failed.
func e2eSend(ctx context.Context, prod *kgo.Client, rate int, d time.Duration) (total int, failed int64) {
	interval := time.Second / time.Duration(rate)
	total = int(d / interval)
	start := time.Now()
	var nfailed atomic.Int64
	for i := 0; i < total; {
		due := int(time.Since(start)/interval) + 1
		for ; i < total && i < due; i++ {
			prod.Produce(ctx, &kgo.Record{Value: e2ePayload('M')}, func(_ *kgo.Record, err error) {
				if err != nil {
					nfailed.Add(1)
				}
			})
		}
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
	}
	return total, nfailed.Load()
}

// percentiles sorts lat and returns its p50, p99 and p99.9 in
// milliseconds (zero when lat is empty).
func percentiles(lat []time.Duration) latency {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	return latency{P50: pct(0.50), P99: pct(0.99), P999: pct(0.999)}
}

// kgoRoundTrips produces n single 100-byte records one after another
// (each waits for its acknowledgement) and returns the latency
// percentiles: with acks=all on RF=3 every one is a full replication
// round trip.
func kgoRoundTrips(ctx context.Context, c *cluster, topic, acks string, n int) (latency, error) {
	cl, err := c.client(append(kgoProducerOpts(topic, acks), kgo.ProducerLinger(0))...)
	if err != nil {
		return latency{}, err
	}
	defer cl.Close()
	payload := make([]byte, 100)
	lat := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: payload}).FirstErr(); err != nil {
			return latency{}, fmt.Errorf("bench: round trip: %w", err)
		}
		lat = append(lat, time.Since(t0))
	}
	l := percentiles(lat)
	l.Sent, l.Received = n, n
	return l, nil
}
