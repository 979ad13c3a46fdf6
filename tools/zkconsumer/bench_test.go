package zkconsumer

import (
	"context"
	"fmt"
	"testing"
)

func benchGroup(consumers, streams, topics, partitions int) GroupState {
	g := GroupState{Members: map[string]map[string]int{}, Partitions: map[string][]int32{}}
	for t := 0; t < topics; t++ {
		g.Partitions[fmt.Sprintf("topic-%d", t)] = parts(partitions)
	}
	for c := 0; c < consumers; c++ {
		sub := map[string]int{}
		for t := 0; t < topics; t++ {
			sub[fmt.Sprintf("topic-%d", t)] = streams
		}
		g.Members[fmt.Sprintf("grp_host%d-1467000000000-3f2a9c1b", c)] = sub
	}
	return g
}

// BenchmarkZKConsumerAssign: 50 consumers × 2 streams, 10 topics × 100
// partitions (1000 partitions), as every member computes it per rebalance.
func BenchmarkZKConsumerAssign(b *testing.B) {
	g := benchGroup(50, 2, 10, 100)
	for _, strategy := range []string{StrategyRange, StrategyRoundRobin} {
		assign, _ := AssignorFor(strategy)
		b.Run(strategy, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := assign(g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkZKConsumerStreamNext measures the per-message cost of handing a
// queued message to the application and marking the previous one
// processed (no network).
func BenchmarkZKConsumerStreamNext(b *testing.B) {
	c := &Connector{cfg: DefaultConfig(), quit: make(chan struct{}), metrics: newMetrics(nil)}
	ps := &partState{processed: 0, committed: -1}
	s := &Stream{c: c, ch: make(chan *Message, 1024)}
	msgs := make([]*Message, 1024)
	for i := range msgs {
		msgs[i] = &Message{Offset: int64(i), ps: ps}
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.ch <- msgs[i%len(msgs)]
		if _, err := s.Next(ctx); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
