package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/chaos/history"
)

// Queue is the queue workload; see the package comment.
type Queue struct {
	env      Env
	prodStop context.CancelFunc
	consStop context.CancelFunc
	prodWG   sync.WaitGroup
	consWG   sync.WaitGroup
	mu       sync.Mutex
	errs     []error
	polledTo map[int32]int64 // partition -> highest offset polled + 1, by any member
}

func (q *Queue) Name() string { return "queue" }

func (q *Queue) fail(err error) {
	q.mu.Lock()
	q.errs = append(q.errs, err)
	q.mu.Unlock()
}

// Start launches the five producers and the two group members.
func (q *Queue) Start(ctx context.Context, env Env) error {
	q.env = env
	pctx, pcancel := context.WithCancel(ctx)
	cctx, ccancel := context.WithCancel(ctx)
	q.prodStop, q.consStop = pcancel, ccancel
	for i := 0; i < 2; i++ {
		cl, err := q.groupClient(fmt.Sprintf("group-%d", i))
		if err != nil {
			return err
		}
		q.consWG.Add(1)
		go func(name string) {
			defer q.consWG.Done()
			q.consume(cctx, cl, name)
		}(fmt.Sprintf("group-%d", i))
	}
	for _, p := range []struct {
		name string
		idem bool
	}{{"kgo-idem-0", true}, {"kgo-idem-1", true}, {"kgo-plain-0", false}} {
		cl, err := q.kgoProducer(p.idem)
		if err != nil {
			return err
		}
		q.prodWG.Add(1)
		go func(name string, idem bool) {
			defer q.prodWG.Done()
			q.produceKgo(pctx, cl, name, idem)
		}(p.name, p.idem)
	}
	for _, p := range []struct {
		name string
		idem bool
	}{{"sarama-idem-0", true}, {"sarama-plain-0", false}} {
		sp, err := newSaramaProducer(env.Bootstrap, p.idem)
		if err != nil {
			return err
		}
		q.prodWG.Add(1)
		go func(name string, idem bool) {
			defer q.prodWG.Done()
			q.produceSarama(pctx, sp, name, idem)
		}(p.name, p.idem)
	}
	return nil
}

// Stop stops the producers, then the consumers; bounded by ctx.
func (q *Queue) Stop(ctx context.Context) error {
	q.prodStop()
	if err := waitGroup(ctx, &q.prodWG); err != nil {
		return fmt.Errorf("workload: producers: %w", err)
	}
	q.drain(ctx, 60*time.Second)
	q.consStop()
	if err := waitGroup(ctx, &q.consWG); err != nil {
		return fmt.Errorf("workload: consumers: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return errors.Join(q.errs...)
}

// drain waits (at most d) until the group has polled up to every
// partition's end offset, listed once the producers stopped, and records
// the outcome: with the group caught up, every acknowledged value must have
// been polled by some member (the checker's undelivered rule).
func (q *Queue) drain(ctx context.Context, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	op := history.Op{Process: "group", F: history.Drained, Type: history.Info}
	err := func() error {
		cl, err := kgo.NewClient(commonOpts(q.env.Bootstrap)...)
		if err != nil {
			return err
		}
		defer cl.Close()
		ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, q.env.Topic)
		if err != nil {
			return err
		}
		if err := ends.Error(); err != nil {
			return err
		}
		for {
			behind := ""
			q.mu.Lock()
			ends.Each(func(o kadm.ListedOffset) {
				if q.polledTo[o.Partition] < o.Offset && behind == "" {
					behind = fmt.Sprintf("p%d polled to %d of %d", o.Partition, q.polledTo[o.Partition], o.Offset)
				}
			})
			q.mu.Unlock()
			if behind == "" {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: %w", behind, ctx.Err())
			case <-time.After(200 * time.Millisecond): // re-check the condition
			}
		}
	}()
	if err != nil {
		op.Err = err.Error()
	} else {
		op.Type = history.OK
	}
	q.env.History.Add(op)
}

// FinalRead reads the queue topic from offset 0 to its end (bounded: 120 s).
func (q *Queue) FinalRead(ctx context.Context) error {
	return FinalRead(ctx, q.env.Bootstrap, q.env.Topic, q.env.History, 120*time.Second)
}

func waitGroup(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func commonOpts(bootstrap []string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(bootstrap...),
		kgo.DialTimeout(3 * time.Second),
		kgo.RequestTimeoutOverhead(5 * time.Second),
		kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.MetadataMaxAge(5 * time.Second),
		kgo.RetryTimeout(30 * time.Second),
	}
}

func (q *Queue) kgoProducer(idem bool) (*kgo.Client, error) {
	opts := append(commonOpts(q.env.Bootstrap),
		kgo.DefaultProduceTopic(q.env.Topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(20*time.Second),
		kgo.ProduceRequestTimeout(10*time.Second),
		kgo.MaxBufferedRecords(1000),
		kgo.ProducerLinger(5*time.Millisecond),
	)
	if !idem {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return kgo.NewClient(opts...)
}

// limiter paces a producer at rate per second.
func pace(ctx context.Context, rate int) <-chan time.Time {
	if rate <= 0 {
		rate = 50
	}
	t := time.NewTicker(time.Second / time.Duration(rate))
	go func() { <-ctx.Done(); t.Stop() }()
	return t.C
}

func (q *Queue) produceKgo(ctx context.Context, cl *kgo.Client, name string, idem bool) {
	h := q.env.History
	inflight := make(chan struct{}, 200) // bounds the records buffered while the cluster is down
	tick := pace(ctx, q.env.Rate)
	var seq int64
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick:
		}
		select {
		case <-ctx.Done():
			break loop
		case inflight <- struct{}{}:
		}
		seq++
		s, v := seq, fmt.Sprintf("%s/%d", name, seq)
		h.Add(history.Op{Process: name, Type: history.Invoke, F: history.Send, Value: v, Seq: s, Idempotent: idem, Client: "kgo"})
		// The produce context is not ctx: stopping must not cancel records in
		// flight, whose outcome we want to learn (Flush below bounds it).
		cl.Produce(context.Background(), &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
			defer func() { <-inflight }()
			op := history.Op{Process: name, F: history.Send, Value: v, Seq: s, Idempotent: idem, Client: "kgo"}
			if err != nil {
				op.Type, op.Err = history.Info, err.Error()
			} else {
				op.Type, op.Partition, op.Offset = history.OK, r.Partition, r.Offset
			}
			h.Add(op)
		})
	}
	fctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = cl.Flush(fctx)
	cl.Close() // fails what is still buffered: recorded as info
}

func (q *Queue) groupClient(name string) (*kgo.Client, error) {
	h := q.env.History
	record := func(f string, m map[string][]int32) {
		for _, ps := range m {
			for _, p := range ps {
				h.Add(history.Op{Process: name, Type: history.OK, F: f, Partition: p})
			}
		}
	}
	opts := append(commonOpts(q.env.Bootstrap),
		kgo.ConsumerGroup("samsa-chaos-group"),
		kgo.ConsumeTopics(q.env.Topic),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.SessionTimeout(10*time.Second),
		kgo.HeartbeatInterval(time.Second),
		kgo.RebalanceTimeout(20*time.Second),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { record(history.Assign, m) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { record(history.Revoke, m) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { record(history.Revoke, m) }),
	)
	return kgo.NewClient(opts...)
}

func (q *Queue) consume(ctx context.Context, cl *kgo.Client, name string) {
	h := q.env.History
	defer cl.Close()
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		next := map[string]map[int32]kgo.EpochOffset{}
		fs.EachRecord(func(r *kgo.Record) {
			h.Add(history.Op{Process: name, Type: history.OK, F: history.Poll, Value: string(r.Value),
				Partition: r.Partition, Offset: r.Offset, Client: "kgo"})
			q.mu.Lock()
			if q.polledTo == nil {
				q.polledTo = map[int32]int64{}
			}
			q.polledTo[r.Partition] = max(q.polledTo[r.Partition], r.Offset+1)
			q.mu.Unlock()
			if next[r.Topic] == nil {
				next[r.Topic] = map[int32]kgo.EpochOffset{}
			}
			next[r.Topic][r.Partition] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
		})
		if len(next) > 0 {
			// The invoke goes first: while the commit is in flight the
			// coordinator may apply it and hand the partition to the other
			// member, whose first poll the checker must judge against it.
			for _, ps := range next {
				for p, eo := range ps {
					h.Add(history.Op{Process: name, Type: history.Invoke, F: history.Commit, Partition: p, Offset: eo.Offset, Client: "kgo"})
				}
			}
			cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			cl.CommitOffsetsSync(cctx, next, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
				for t, ps := range next {
					for p, eo := range ps {
						op := history.Op{Process: name, F: history.Commit, Partition: p, Offset: eo.Offset, Client: "kgo"}
						code, found := commitCode(resp, t, p)
						switch {
						case err != nil:
							op.Type, op.Err = history.Info, err.Error()
						case !found:
							op.Type, op.Err = history.Info, "partition missing from the response"
						case code != 0:
							// Info, not fail, whatever the code: franz-go retries
							// a commit that timed out or met NOT_COORDINATOR,
							// and the code is the last attempt's, while an
							// earlier attempt's append may be in the log.
							op.Type, op.Err = history.Info, fmt.Sprintf("error code %d", code)
						default:
							op.Type = history.OK
						}
						h.Add(op)
					}
				}
			})
			cancel()
		}
		cl.AllowRebalance()
	}
}

func commitCode(resp *kmsg.OffsetCommitResponse, topic string, p int32) (int16, bool) {
	if resp == nil {
		return 0, false
	}
	for _, t := range resp.Topics {
		if t.Topic != topic {
			continue
		}
		for _, pp := range t.Partitions {
			if pp.Partition == p {
				return pp.ErrorCode, true
			}
		}
	}
	return 0, false
}
