package main

import (
	"context"
	"fmt"
)

// runTopology starts one cluster of topo for every system, all of them at
// once, and measures the producer and consumer cells with the systems'
// runs interleaved: run r of a cell on every system before run r+1 on
// any. The targets are ratios between systems (Samsa against kfake), and
// on this shared machine the load moves by 2× within a minute, so two
// systems measured one after the other compare two loads; interleaved,
// a change of load falls on both sides of each ratio. The latency and
// transaction cells follow system by system: e2e is judged on its own
// figures, and a transaction cell against a baseline on its own cluster.
func runTopology(ctx context.Context, o options, res *results, topo topology) error {
	var cs []*cluster
	defer func() {
		for _, c := range cs {
			c.stop()
		}
	}()
	for si, sys := range o.systems {
		logf("%s: starting %s", sys, topo)
		c, err := startCluster(ctx, spec(o, sys, topo.Brokers, o.basePort+100*si, fmt.Sprintf("%s-%d", sys, topo.Brokers)))
		if err != nil {
			return err
		}
		cs = append(cs, c)
	}
	if !o.txnOnly {
		consumeTopics, err := runProduceCells(ctx, o, res, cs, topo)
		if err != nil {
			return err
		}
		runConsumeCells(ctx, o, res, cs, topo, consumeTopics)
	}
	for _, c := range cs {
		if err := runOwnCells(ctx, o, res, c, topo); err != nil {
			return err
		}
	}
	return nil
}

// runOwnCells measures the cells judged within one system: e2e latency,
// round trips and transactions (only transactions with -txn-only).
func runOwnCells(ctx context.Context, o options, res *results, c *cluster, topo topology) error {
	if !o.txnOnly {
		if err := runE2ECells(ctx, o, res, c, c.system, topo); err != nil {
			return err
		}
		if err := runRTTCell(ctx, o, res, c, c.system, topo); err != nil {
			return err
		}
	}
	if o.txn || o.txnOnly {
		return runTxn(ctx, o, res, c, c.system, topo)
	}
	return nil
}

// runProduceCells measures every producer cell on every cluster, each run
// on a fresh topic, the clusters' runs interleaved. It keeps each
// cluster's first topic of each record size produced by kgo with acks=1
// for the consumers and returns those topics, by cluster and size.
func runProduceCells(ctx context.Context, o options, res *results, cs []*cluster, topo topology) ([]map[int]string, error) {
	consumeTopics := make([]map[int]string, len(cs))
	for i := range cs {
		consumeTopics[i] = map[int]string{}
	}
	for _, size := range []int{100, 1024} {
		for _, acks := range []string{"1", "all"} {
			for _, client := range []string{"sarama", "kgo"} {
				cells := make([]*cell, len(cs))
				for i, c := range cs {
					cells[i] = &cell{Kind: "produce", System: c.system, Topo: topo, Size: size, Acks: acks, Client: client, N: recordsPerRun(o, size)}
					c.rss.reset()
				}
				for r := range o.repeats {
					for i, c := range cs {
						if err := runProduceOnce(ctx, o, c, cells[i], r, consumeTopics[i]); err != nil {
							return nil, err
						}
					}
				}
				for i, c := range cs {
					cells[i].RSS = c.rss.maxPeak()
					res.addCell(cells[i])
				}
			}
		}
	}
	return consumeTopics, nil
}

// runProduceOnce makes run r of one producer cell on c.
func runProduceOnce(ctx context.Context, o options, c *cluster, cell *cell, r int, consumeTopic map[int]string) error {
	topic := fmt.Sprintf("p%d-acks%s-%s-%d", cell.Size, cell.Acks, cell.Client, r)
	if err := c.createTopic(ctx, topic, 6, cell.Topo.RF); err != nil {
		return err
	}
	var t throughput
	var err error
	if cell.Client == "sarama" {
		t, err = saramaProduce(ctx, o.samsaBin, c.bootstrap, topic, cell.N, cell.Size, cell.Acks, benchTimeout)
	} else {
		t, err = kgoProduce(ctx, c, topic, cell.N, cell.Size, cell.Acks, benchTimeout)
	}
	if err != nil {
		cell.failRun(err)
		return nil
	}
	cell.Runs = append(cell.Runs, t)
	if cell.Acks == "1" && cell.Client == "kgo" && consumeTopic[cell.Size] == "" {
		consumeTopic[cell.Size] = topic
		return nil
	}
	c.deleteTopic(ctx, topic)
	return nil
}

// runConsumeCells measures every consumer cell on every cluster: o.repeats
// reads from the start of the topic its producers kept for that record
// size, the clusters' reads interleaved.
func runConsumeCells(ctx context.Context, o options, res *results, cs []*cluster, topo topology, consumeTopics []map[int]string) {
	for _, size := range []int{100, 1024} {
		n := recordsPerRun(o, size)
		for _, client := range []string{"sarama", "kgo"} {
			cells := make([]*cell, len(cs))
			for i, c := range cs {
				cells[i] = &cell{Kind: "consume", System: c.system, Topo: topo, Size: size, Client: client, N: n}
				c.rss.reset()
			}
			for range o.repeats {
				for i, c := range cs {
					if topic := consumeTopics[i][size]; topic != "" {
						consumeOnce(ctx, o, c, cells[i], topic)
					}
				}
			}
			for i, c := range cs {
				if consumeTopics[i][size] != "" {
					cells[i].RSS = c.rss.maxPeak()
					res.addCell(cells[i])
				}
			}
		}
	}
}

// consumeOnce makes one run of a consumer cell on c.
func consumeOnce(ctx context.Context, o options, c *cluster, cell *cell, topic string) {
	var t throughput
	var err error
	if cell.Client == "sarama" {
		t, err = saramaConsume(ctx, o.samsaBin, c.bootstrap, topic, cell.N, benchTimeout)
	} else {
		t, err = kgoConsume(ctx, c, topic, cell.N, benchTimeout)
	}
	if err != nil {
		cell.failRun(err)
		return
	}
	cell.Runs = append(cell.Runs, t)
}
