package zkconsumer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"samsa/kafka"
)

// fetcher is the goroutine that feeds one owned partition into its stream.
type fetcher struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// saramaConfig derives the Sarama configuration from the consumer's.
func (c *Connector) saramaConfig() *sarama.Config {
	var sc *sarama.Config
	if c.cfg.Sarama != nil {
		cp := *c.cfg.Sarama
		sc = &cp
	} else {
		sc = sarama.NewConfig()
		sc.Version = sarama.V2_1_0_0
	}
	sc.ClientID = c.cfg.ClientID
	sc.Consumer.Return.Errors = true
	sc.Consumer.Fetch.Default = c.cfg.FetchMessageMaxBytes
	sc.Consumer.Fetch.Max = c.cfg.FetchMessageMaxBytes
	sc.Consumer.Fetch.Min = max(c.cfg.FetchMinBytes, 1)
	if c.cfg.FetchWaitMax > 0 {
		sc.Consumer.MaxWaitTime = c.cfg.FetchWaitMax
	}
	if c.cfg.RefreshLeaderBackoff > 0 {
		sc.Consumer.Retry.Backoff = c.cfg.RefreshLeaderBackoff
		sc.Metadata.Retry.Backoff = c.cfg.RefreshLeaderBackoff
	}
	if c.cfg.SocketTimeout > 0 {
		sc.Net.ReadTimeout = c.cfg.SocketTimeout
		sc.Net.WriteTimeout = c.cfg.SocketTimeout
	}
	sc.ChannelBufferSize = 100
	return sc
}

// saramaClients returns the shared Sarama client and consumer. The first
// caller starts creating them on a goroutine of its own, with the PLAINTEXT
// endpoints of the brokers registered in ZooKeeper as bootstrap addresses
// (the old consumer finds brokers in ZooKeeper); every caller waits for that
// attempt or for ctx. A failed attempt is returned and the next call tries
// again: unreachable brokers delay fetching but neither fail a rebalance
// nor hold up stopping the fetchers.
func (c *Connector) saramaClients(ctx context.Context) (sarama.Client, sarama.Consumer, error) {
	c.saramaMu.Lock()
	if c.saramaMu.closed {
		c.saramaMu.Unlock()
		return nil, nil, ErrClosed
	}
	if c.saramaMu.client != nil {
		defer c.saramaMu.Unlock()
		return c.saramaMu.client, c.saramaMu.consumer, nil
	}
	if c.saramaMu.dialing == nil {
		done := make(chan struct{})
		c.saramaMu.dialing = done
		c.saramaMu.wg.Add(1)
		go func() {
			defer c.saramaMu.wg.Done()
			defer close(done)
			client, consumer, err := c.dialSarama()
			c.saramaMu.Lock()
			defer c.saramaMu.Unlock()
			c.saramaMu.dialing = nil
			c.saramaMu.err = err
			if err != nil {
				return
			}
			if c.saramaMu.closed {
				_ = consumer.Close()
				_ = client.Close()
				return
			}
			c.saramaMu.client, c.saramaMu.consumer = client, consumer
		}()
	}
	done := c.saramaMu.dialing
	c.saramaMu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	c.saramaMu.Lock()
	defer c.saramaMu.Unlock()
	if c.saramaMu.client == nil {
		return nil, nil, c.saramaMu.err
	}
	return c.saramaMu.client, c.saramaMu.consumer, nil
}

// dialSarama creates a Sarama client and consumer for the brokers
// registered in ZooKeeper.
func (c *Connector) dialSarama() (sarama.Client, sarama.Consumer, error) {
	brokers, err := c.zk.GetAllBrokers()
	if err != nil {
		return nil, nil, fmt.Errorf("zkconsumer: read brokers: %w", err)
	}
	ids := make([]int32, 0, len(brokers))
	for id := range brokers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var addrs []string
	for _, id := range ids {
		for _, ep := range brokers[id].Registration.Endpoints {
			if ep.SecurityProtocol == "PLAINTEXT" {
				addrs = append(addrs, net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))))
				break
			}
		}
	}
	if len(addrs) == 0 {
		return nil, nil, errors.New("zkconsumer: no broker has a PLAINTEXT endpoint")
	}
	client, err := sarama.NewClient(addrs, c.saramaConfig())
	if err != nil {
		return nil, nil, fmt.Errorf("zkconsumer: connect to brokers %v: %w", addrs, err)
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		_ = client.Close()
		return nil, nil, fmt.Errorf("zkconsumer: %w", err)
	}
	return client, consumer, nil
}

// closeSarama closes the Sarama consumer and client and waits for a
// creation attempt in flight; later saramaClients calls fail with ErrClosed.
func (c *Connector) closeSarama() {
	c.saramaMu.Lock()
	c.saramaMu.closed = true
	client, consumer := c.saramaMu.client, c.saramaMu.consumer
	c.saramaMu.Unlock()
	if consumer != nil {
		_ = consumer.Close()
	}
	if client != nil {
		_ = client.Close()
	}
	c.saramaMu.wg.Wait()
}

// stopFetchers ends the generation: messages fetched so far become stale,
// every fetcher stops, and the queued read-ahead is dropped.
func (c *Connector) stopFetchers() {
	c.mu.Lock()
	c.mu.gen++
	streams := c.mu.streams
	c.mu.Unlock()
	for _, f := range c.fetchers {
		f.cancel()
	}
	for tp, f := range c.fetchers {
		<-f.done
		delete(c.fetchers, tp)
	}
	for _, s := range streams {
		s.drain()
	}
}

// startFetcher starts feeding ps's partition into s from ps.processed.
func (c *Connector) startFetcher(ps *partState, s *Stream) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fetcher{cancel: cancel, done: make(chan struct{})}
	c.fetchers[ps.tp] = f
	c.mu.Lock()
	start := ps.processed
	c.mu.Unlock()
	go func() {
		defer close(f.done)
		c.fetchLoop(ctx, ps, s, start)
	}()
}

// waitCtx waits d or until ctx ends; it reports whether ctx is still live.
func waitCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// fetchLoop consumes one partition until ctx ends. An offset of -1 (nothing
// committed) or an out-of-range offset is replaced according to
// auto.offset.reset. The loop ends with ctx; each failed round waits
// refresh.leader.backoff.ms.
func (c *Connector) fetchLoop(ctx context.Context, ps *partState, s *Stream, offset int64) {
	log := c.log.WithField("topic", ps.tp.Topic).WithField("partition", ps.tp.Partition)
	backoff := max(c.cfg.RefreshLeaderBackoff, 10*time.Millisecond)
	for ctx.Err() == nil {
		client, consumer, err := c.saramaClients(ctx)
		if err != nil {
			log.WithError(err).Debug("no broker connection yet")
			waitCtx(ctx, backoff)
			continue
		}
		if offset < 0 {
			off, err := resetOffset(client, ps.tp, c.cfg.AutoOffsetReset)
			if err != nil {
				log.WithError(err).Warn("cannot resolve auto.offset.reset")
				waitCtx(ctx, backoff)
				continue
			}
			log.WithField("offset", off).Info("no valid committed offset; starting at " + c.cfg.AutoOffsetReset)
			offset = off
			c.mu.Lock()
			ps.processed = off
			c.mu.Unlock()
		}
		pc, err := consumer.ConsumePartition(ps.tp.Topic, ps.tp.Partition, offset)
		if errors.Is(err, sarama.ErrOffsetOutOfRange) {
			log.WithField("offset", offset).Warn("offset out of range")
			offset = -1
			continue
		}
		if err != nil {
			log.WithError(err).Debug("cannot start fetching")
			waitCtx(ctx, backoff)
			continue
		}
		next, outOfRange := c.pump(ctx, pc, ps, s, offset)
		_ = pc.Close()
		offset = next
		if outOfRange {
			log.WithField("offset", offset).Warn("offset out of range while fetching")
			offset = -1
		} else if ctx.Err() == nil {
			waitCtx(ctx, backoff)
		}
	}
}

// pump forwards messages from pc to s until ctx ends, pc stops, or the
// offset falls out of range. It returns the next offset to fetch.
func (c *Connector) pump(ctx context.Context, pc sarama.PartitionConsumer, ps *partState, s *Stream, offset int64) (int64, bool) {
	for {
		select {
		case <-ctx.Done():
			return offset, false
		case m, ok := <-pc.Messages():
			if !ok {
				return offset, false
			}
			msg := &Message{
				Topic: m.Topic, Partition: m.Partition, Offset: m.Offset,
				Key: m.Key, Value: m.Value, Timestamp: m.Timestamp,
				gen: ps.gen, ps: ps,
			}
			select {
			case s.ch <- msg:
				offset = m.Offset + 1
			case <-ctx.Done():
				return offset, false
			}
		case err, ok := <-pc.Errors():
			if !ok {
				return offset, false
			}
			if errors.Is(err.Err, sarama.ErrOffsetOutOfRange) {
				return offset, true
			}
			c.log.WithError(err).Debug("fetch error")
		}
	}
}

// resetOffset returns the partition's log start (smallest) or log end
// (largest) offset.
func resetOffset(client sarama.Client, tp kafka.TopicPartition, reset string) (int64, error) {
	which := sarama.OffsetNewest
	if reset == ResetSmallest {
		which = sarama.OffsetOldest
	}
	return client.GetOffset(tp.Topic, tp.Partition, which)
}
