package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// Errors of the controller's request APIs; the broker maps them to Kafka error codes.
var (
	// ErrNotController: this broker is not the active controller (NOT_CONTROLLER).
	ErrNotController = errors.New("controller: not the active controller")
	// ErrStaleBrokerEpoch: the request's broker epoch is older than the registration the
	// controller knows (STALE_BROKER_EPOCH, KIP-380).
	ErrStaleBrokerEpoch = errors.New("controller: stale broker epoch")
	// ErrBrokerNotAvailable: the broker is not registered (BROKER_NOT_AVAILABLE).
	ErrBrokerNotAvailable = errors.New("controller: broker not available")
)

type controlledShutdownResult struct {
	remaining []kafka.TopicPartition
	err       error
}

// ControlledShutdown handles a ControlledShutdown request from brokerID (API key 7, Kafka's
// processControlledShutdown). brokerEpoch is the request's BrokerEpoch (-1 = unknown, not
// checked). The broker is marked shutting down; the partitions it leads (replication factor
// > 1) elect another in-sync replica with the ControlledShutdown strategy; the replicas it
// follows leave their ISR and get StopReplica (delete=false). It returns the partitions the
// broker still leads; the broker retries until the list is empty. Errors: ErrNotController,
// ErrStaleBrokerEpoch, ErrBrokerNotAvailable, ctx's error. It blocks until the event
// goroutine has handled the request.
func (c *Controller) ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) ([]kafka.TopicPartition, error) {
	reply := make(chan controlledShutdownResult, 1)
	c.enqueue(controlledShutdownEvent{brokerID: brokerID, brokerEpoch: brokerEpoch, reply: reply})
	r, err := awaitReply(ctx, c, reply)
	if err != nil {
		return nil, err
	}
	return r.remaining, r.err
}

// processControlledShutdown runs on the event goroutine and always replies.
func (c *Controller) processControlledShutdown(e controlledShutdownEvent) error {
	if !c.active.Load() {
		e.reply <- controlledShutdownResult{err: ErrNotController}
		return nil
	}
	remaining, err := c.doControlledShutdown(e.brokerID, e.brokerEpoch)
	if isControllerMoved(err) {
		e.reply <- controlledShutdownResult{err: ErrNotController}
		return err
	}
	e.reply <- controlledShutdownResult{remaining: remaining, err: err}
	if err != nil && (errors.Is(err, ErrStaleBrokerEpoch) || errors.Is(err, ErrBrokerNotAvailable)) {
		return nil // answered; not a controller failure
	}
	return err
}

// doControlledShutdown is Kafka's doControlledShutdown, with its two rounds of ZooKeeper
// writes (elections, then ISR shrinks) made one: moveForControlledShutdown.
func (c *Controller) doControlledShutdown(id int32, brokerEpoch int64) ([]kafka.TopicPartition, error) {
	cc := c.cc
	b, ok := cc.liveBrokers[id]
	if !ok {
		return nil, fmt.Errorf("%w: broker %d", ErrBrokerNotAvailable, id)
	}
	if brokerEpoch != -1 && brokerEpoch < b.Epoch {
		return nil, fmt.Errorf("%w: broker %d sent epoch %d, registered with %d", ErrStaleBrokerEpoch, id, brokerEpoch, b.Epoch)
	}
	cc.shuttingDown[id] = struct{}{}
	start := c.cfg.Now()
	c.log.WithFields(logrus.Fields{"shutting_down_broker": id, "controller_epoch": cc.epoch,
		"shutting_down": slices.Sorted(maps.Keys(cc.shuttingDown))}).Info("controller: controlled shutdown")

	led, followed := cc.controlledShutdownPartitions(id)
	rounds, err := c.moveForControlledShutdown(id, led, followed)
	if err != nil {
		return nil, err
	}
	remaining := cc.replicatedPartitionsLedBy(id)
	// The answer's own cost (one fenced write round, more only after zkVersion conflicts) is
	// what an operator waits on before the broker stops; the broker logs the round trip
	// ("controlled shutdown succeeded").
	c.log.WithFields(logrus.Fields{"shutting_down_broker": id, "controller_epoch": cc.epoch, "led": len(led),
		"followed": len(followed), "remaining": len(remaining), "write_rounds": rounds,
		"took": c.cfg.Now().Sub(start).Round(time.Millisecond).String()}).
		Info("controller: controlled shutdown handled")
	return remaining, nil
}

// controlledShutdownPartitions splits the partitions with a replica on broker id, more than
// one replica, a leader, and a topic not queued for deletion, into those id leads and those
// it follows (Kafka's partitionsLedByBroker and partitionsFollowedByBroker), sorted.
func (cc *controllerContext) controlledShutdownPartitions(id int32) (led, followed []kafka.TopicPartition) {
	for _, tp := range cc.allPartitions() {
		replicas := cc.replicas(tp)
		l, hasLeader := cc.leadership[tp]
		if !contains(replicas, id) || len(replicas) <= 1 || !hasLeader || cc.isQueuedForDeletion(tp.Topic) {
			continue
		}
		if l.Leader == id {
			led = append(led, tp)
		} else {
			followed = append(followed, tp)
		}
	}
	return led, followed
}

// replicatedPartitionsLedBy returns the partitions with more than one replica, of topics not
// queued for deletion, that broker id leads: ControlledShutdown's remaining partitions.
func (cc *controllerContext) replicatedPartitionsLedBy(id int32) []kafka.TopicPartition {
	var out []kafka.TopicPartition
	for _, tp := range cc.allPartitions() {
		l, ok := cc.leadership[tp]
		if ok && l.Leader == id && len(cc.replicas(tp)) > 1 && !cc.isQueuedForDeletion(tp.Topic) {
			out = append(out, tp)
		}
	}
	return out
}

// shutdownPending is what a controlled shutdown's write round still has to move: the
// partitions to elect a new leader for and those to shrink the ISR of.
type shutdownPending struct {
	led, followed []kafka.TopicPartition
}

func (p shutdownPending) empty() bool { return len(p.led) == 0 && len(p.followed) == 0 }

// moveForControlledShutdown moves the partitions broker id leads (led: a ControlledShutdown
// election each, partition state Online) and those it follows (followed: its replica goes
// Offline and leaves the ISR). Kafka 2.8 writes the elections, then the ISR shrinks, one
// round of ZooKeeper writes after the other; the two sets are disjoint, so no write depends
// on the other round, and here both go in one round of fenced multis (zkutil's
// UpdatePartitionStates: each write conditional on its zkVersion, every multi on the
// controller epoch). A write that meets a zkVersion conflict, or a led partition without an
// eligible leader in its cached state, is read back and decided again in the next round, at
// most maxStateWriteRounds in all, as each state machine does on its own. The requests
// queued are Kafka's: LeaderAndIsr with the new leader to each led partition's live replicas
// (the shutting-down broker included), LeaderAndIsr with the shrunk ISR to each followed
// partition's other replicas, StopReplica (delete=false) to id for each followed partition,
// and UpdateMetadata for all of them to every broker. It returns the rounds that wrote.
func (c *Controller) moveForControlledShutdown(id int32, led, followed []kafka.TopicPartition) (int, error) {
	pending, other := c.controlledShutdownTransitions(id, led, followed)
	if len(other) > 0 {
		// Neither Online nor Offline (New, or an invalid transition): the partition state
		// machine's own path, which initializes or logs them.
		if _, err := c.handlePartitionStateChanges(other, OnlinePartition, electControlledShutdown); err != nil {
			return 0, err
		}
	}
	following := pending.followed
	shrunk := make(map[kafka.TopicPartition]LeaderAndIsr)
	var elected []kafka.TopicPartition
	rounds := 0
	for round := 0; !pending.empty() && round < maxStateWriteRounds; round++ {
		e, next, wrote, err := c.controlledShutdownRound(id, pending, round > 0, shrunk)
		if err != nil {
			return 0, err
		}
		elected = append(elected, e...)
		pending = next
		if wrote {
			rounds++
		}
	}
	for _, tp := range pending.led {
		c.stateLog(tp).Error("controller: leader election gave up after repeated zkVersion conflicts")
	}
	c.logIsrShrinksGivenUp(id, pending.followed)
	for _, tp := range elected {
		c.setPartitionState(tp, OnlinePartition)
	}
	for _, tp := range following {
		if l, ok := shrunk[tp]; ok { // else failed, and logged
			c.replicaWentOffline(id, tp, l)
		}
	}
	return rounds, nil
}

// controlledShutdownTransitions returns what moveForControlledShutdown writes: the led
// partitions that are Online or Offline, and the followed ones whose replica on id may go
// Offline (the others are logged, as handleReplicaStateChanges does). other holds the led
// partitions in any other state.
func (c *Controller) controlledShutdownTransitions(id int32, led, followed []kafka.TopicPartition) (pending shutdownPending, other []kafka.TopicPartition) {
	for _, tp := range led {
		if s := c.cc.partitionStates[tp]; s == OnlinePartition || s == OfflinePartition {
			pending.led = append(pending.led, tp)
		} else {
			other = append(other, tp)
		}
	}
	replicas := make([]PartitionReplica, 0, len(followed))
	for _, tp := range followed {
		replicas = append(replicas, PartitionReplica{tp, id})
	}
	for _, r := range c.validReplicaTransitions(replicas, OfflineReplica) {
		pending.followed = append(pending.followed, r.TopicPartition)
	}
	return pending, other
}

// controlledShutdownRound is one write round of moveForControlledShutdown: take the pending
// partitions' states (cached on the first round, read after: state_cache.go), decide the
// elections and the ISR shrinks, write them all at once, and take in the outcome (the ISR
// shrinks' states go to shrunk). next is what must go again.
func (c *Controller) controlledShutdownRound(id int32, pending shutdownPending, fresh bool,
	shrunk map[kafka.TopicPartition]LeaderAndIsr) (elected []kafka.TopicPartition, next shutdownPending, wrote bool, err error) {
	current, err := c.cachedOrReadStates(append(slices.Clone(pending.led), pending.followed...), fresh)
	if err != nil {
		return nil, shutdownPending{}, false, err
	}
	plan, undecided := c.decideElections(pending.led, current, electControlledShutdown, fresh)
	shrinks := c.decideIsrShrinks(id, pending.followed, current, shrunk)
	toWrite := make(map[kafka.TopicPartition]LeaderAndIsr, len(plan.toWrite)+len(shrinks))
	maps.Copy(toWrite, plan.toWrite)
	maps.Copy(toWrite, shrinks)
	if len(toWrite) == 0 {
		return nil, shutdownPending{led: undecided}, false, nil
	}
	results, err := c.store.UpdatePartitionStates(c.cc.epochZkVersion, toWrite)
	if err != nil {
		return nil, shutdownPending{}, false, fmt.Errorf("controller: update partition states: %w", err)
	}
	elected, conflicts := c.applyElections(plan, results)
	next = shutdownPending{led: append(undecided, conflicts...), followed: c.applyIsrShrinks(id, shrinks, results, shrunk)}
	return elected, next, true, nil
}
