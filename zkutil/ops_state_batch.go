package zkutil

import "errors"
import "samsa/kafka"

// stateBatchOps is how many partition-state writes share one fenced multi
// (about 150 bytes each: well under ZooKeeper's 1 MiB jute.maxbuffer).
const stateBatchOps = 100

// UpdatePartitionStates writes new states, each conditional on the
// partition's ZkVersion and all fenced by the controller epoch zkVersion.
// It returns the new zkVersions of the partitions written and the errors
// of the others: ErrBadVersion (the caller re-reads and retries, Kafka
// style), ErrNoNode, or ErrControllerMoved (the caller resigns).
//
// Kafka 2.8 sends one fenced multi (check /controller_epoch + setData) per
// partition, pipelined. Samsa puts up to stateBatchOps partitions in each
// multi behind one epoch check, and pipelines the multis (a leadership
// wave of 10,000 partitions is 100 requests, not 10,000). A multi is all or
// nothing, so when one partition's write fails (its zkVersion moved: the
// leader shrank its ISR meanwhile) ZooKeeper names the first failing
// operation; that partition gets its error and the rest of the batch is
// sent again without it. The outcome per partition is the one a multi per
// partition gives.
func (c *Client) UpdatePartitionStates(epochZkVersion int32, updates map[kafka.TopicPartition]VersionedState) (map[kafka.TopicPartition]int32, map[kafka.TopicPartition]error) {
	tps := sortedTPs(updates)
	versions := make([]int32, len(tps))
	errs := make([]error, len(tps))
	chunks := (len(tps) + stateBatchOps - 1) / stateBatchOps
	parallel(chunks, func(ci int) {
		lo, hi := ci*stateBatchOps, min((ci+1)*stateBatchOps, len(tps))
		pending := make([]int, 0, hi-lo)
		for i := lo; i < hi; i++ {
			pending = append(pending, i)
		}
		c.updateStateBatch(epochZkVersion, tps, updates, pending, versions, errs)
	})
	okOut := make(map[kafka.TopicPartition]int32, len(tps))
	errOut := make(map[kafka.TopicPartition]error)
	for i, tp := range tps {
		if errs[i] != nil {
			errOut[tp] = errs[i]
		} else {
			okOut[tp] = versions[i]
		}
	}
	return okOut, errOut
}

// updateStateBatch writes the partitions tps[i] for i in pending as fenced
// multis, dropping each partition whose own write fails and resending the
// others, until the rest succeeds or a failure that is not one partition's
// (controller moved, connection) fails them all. It fills versions and
// errs at those indexes. At most len(pending) multis are sent.
func (c *Client) updateStateBatch(epochZkVersion int32, tps []kafka.TopicPartition, updates map[kafka.TopicPartition]VersionedState,
	pending []int, versions []int32, errs []error) {
	ops := make([]Op, 0, len(pending))
	for len(pending) > 0 {
		ops = ops[:0]
		for _, i := range pending {
			u := updates[tps[i]]
			ops = append(ops, SetOp{Path: PartitionStatePath(tps[i].Topic, tps[i].Partition), Data: u.State.Encode(), Version: u.ZkVersion})
		}
		res, err := c.fencedMulti(epochZkVersion, ops...)
		if err == nil {
			for k, i := range pending {
				versions[i] = res[k].Stat.Version
			}
			return
		}
		var me *MultiError
		if errors.As(err, &me) && me.Index >= 0 && me.Index < len(pending) && !errors.Is(err, ErrControllerMoved) {
			// One partition's write failed (after fencedMulti's epoch
			// check): it gets that error (as a multi of its own would),
			// the others go again.
			errs[pending[me.Index]] = err
			pending = append(pending[:me.Index], pending[me.Index+1:]...)
			continue
		}
		for _, i := range pending {
			errs[i] = err
		}
		return
	}
}

// createStateBatch creates /partitions/<p> and /state for the partitions
// tps[i], i in pending, in shared fenced multis. When a create fails,
// ZooKeeper names it: a partition whose /partitions/<p> already exists is
// created alone (createPartitionState, which then creates /state only), a
// partition whose /state exists gets ErrNodeExists; the rest of the batch is
// sent again. Any other failure fails all pending partitions.
func (c *Client) createStateBatch(epochZkVersion int32, tps []kafka.TopicPartition, states map[kafka.TopicPartition]PartitionState,
	pending []int, errs []error) {
	ops := make([]Op, 0, 2*len(pending))
	for len(pending) > 0 {
		ops = ops[:0]
		for _, i := range pending {
			tp := tps[i]
			ops = append(ops, CreateOp{Path: PartitionPath(tp.Topic, tp.Partition), Mode: Persistent},
				CreateOp{Path: PartitionStatePath(tp.Topic, tp.Partition), Data: states[tp].Encode(), Mode: Persistent})
		}
		_, err := c.fencedMulti(epochZkVersion, ops...)
		if err == nil {
			return
		}
		var me *MultiError
		if !errors.As(err, &me) || me.Index < 0 || me.Index >= len(ops) || errors.Is(err, ErrControllerMoved) {
			for _, i := range pending {
				errs[i] = err
			}
			return
		}
		k := me.Index / 2
		i := pending[k]
		if me.Index%2 == 0 && errors.Is(err, ErrNodeExists) {
			errs[i] = c.createPartitionState(epochZkVersion, tps[i], states[tps[i]])
		} else {
			errs[i] = err
		}
		pending = append(pending[:k], pending[k+1:]...)
	}
}
