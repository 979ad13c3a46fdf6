package zkutil_test

import (
	"fmt"
	"testing"

	"samsa/kafka"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// benchStates creates one topic with n partition states and returns them.
func benchStates(b *testing.B, n int) (*zkutil.Client, []kafka.TopicPartition) {
	srv := zktest.Start(b)
	c, err := zkutil.Connect(b.Context(), zkutil.Config{Connect: srv.Chroot(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	assign := make(map[int32][]int32, n)
	states := make(map[kafka.TopicPartition]zkutil.PartitionState, n)
	tps := make([]kafka.TopicPartition, n)
	for p := int32(0); p < int32(n); p++ {
		assign[p] = []int32{1, 2, 3}
		tps[p] = kafka.TopicPartition{Topic: "bench", Partition: p}
		states[tps[p]] = zkutil.PartitionState{Leader: 1, ISR: []int32{1, 2, 3}, ControllerEpoch: 1}
	}
	if err := c.CreateTopic("bench", assign, nil); err != nil {
		b.Fatal(err)
	}
	_, zkv, err := c.ElectController(1)
	if err != nil {
		b.Fatal(err)
	}
	if errs := c.CreatePartitionStates(zkv, states); len(errs) != 0 {
		b.Fatal(errs)
	}
	return c, tps
}

// BenchmarkZKGetPartitionStates reads 1000 /state znodes as one pipelined
// batch (what the controller does at failover).
func BenchmarkZKGetPartitionStates(b *testing.B) {
	c, tps := benchStates(b, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, err := c.GetPartitionStates(tps)
		if err != nil || len(got) != len(tps) {
			b.Fatal(err, len(got))
		}
	}
}

// BenchmarkZKGetPartitionStateSequential reads the same 1000 znodes one
// round trip at a time, for comparison.
func BenchmarkZKGetPartitionStateSequential(b *testing.B) {
	c, tps := benchStates(b, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, tp := range tps {
			if _, _, err := c.GetPartitionState(tp.Topic, tp.Partition); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkZKUpdatePartitionStates writes 1000 /state znodes as one batch of
// epoch-fenced conditional multis (a controller failover's leader election).
func BenchmarkZKUpdatePartitionStates(b *testing.B) {
	c, tps := benchStates(b, 1000)
	_, zkv, err := c.GetControllerEpoch()
	if err != nil {
		b.Fatal(err)
	}
	states, err := c.GetPartitionStates(tps)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for tp, vs := range states {
			vs.State.LeaderEpoch++
			states[tp] = vs
		}
		vers, errs := c.UpdatePartitionStates(zkv, states)
		if len(errs) != 0 {
			b.Fatal(errs)
		}
		for tp, v := range vers {
			vs := states[tp]
			vs.ZkVersion = v
			states[tp] = vs
		}
	}
}

// BenchmarkZKWatchDispatch: ZooKeeper watch events delivered to callbacks.
// Each op changes burst watched znodes in one multi (the events arrive back
// to back) and waits until every callback ran; the re-arm of each watch is
// part of the cost, since a callback runs only after its watch is armed
// again. events/s is burst × ops per second.
func BenchmarkZKWatchDispatch(b *testing.B) {
	for _, burst := range []int{1, 64} {
		b.Run(fmt.Sprintf("burst=%d", burst), func(b *testing.B) { benchWatchDispatch(b, burst) })
	}
}

func benchWatchDispatch(b *testing.B, burst int) {
	srv := zktest.Start(b)
	cs := srv.Chroot(b)
	var clients [2]*zkutil.Client
	for i := range clients {
		c, err := zkutil.Connect(b.Context(), zkutil.Config{Connect: cs})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		clients[i] = c
	}
	w, c := clients[0], clients[1]
	calls := make(chan struct{}, 4*burst)
	ops := make([]zkutil.Op, burst)
	for i := range ops {
		p := fmt.Sprintf("/bench/%03d", i)
		if err := c.EnsurePath(p); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(w.WatchData(p, func() { calls <- struct{}{} }))
		ops[i] = zkutil.SetOp{Path: p, Version: zkutil.AnyVersion}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := c.Multi(ops...); err != nil {
			b.Fatal(err)
		}
		for range burst {
			<-calls
		}
	}
	b.ReportMetric(float64(b.N*burst)/b.Elapsed().Seconds(), "events/s")
}
