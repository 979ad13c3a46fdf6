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

// doControlledShutdown is Kafka's doControlledShutdown.
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

	var led, followed []kafka.TopicPartition
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
	if _, err := c.handlePartitionStateChanges(led, OnlinePartition, electControlledShutdown); err != nil {
		return nil, err
	}
	elected := c.cfg.Now()
	var followers []PartitionReplica
	for _, tp := range followed {
		followers = append(followers, PartitionReplica{tp, id})
	}
	if err := c.handleReplicaStateChanges(followers, OfflineReplica); err != nil {
		return nil, err
	}
	var remaining []kafka.TopicPartition
	for _, tp := range cc.allPartitions() {
		l, ok := cc.leadership[tp]
		if ok && l.Leader == id && len(cc.replicas(tp)) > 1 && !cc.isQueuedForDeletion(tp.Topic) {
			remaining = append(remaining, tp)
		}
	}
	// The answer's own cost (two fenced write rounds) is what an operator waits on before the
	// broker stops; the broker logs the round trip ("controlled shutdown succeeded").
	c.log.WithFields(logrus.Fields{"shutting_down_broker": id, "controller_epoch": cc.epoch, "led": len(led),
		"followed": len(followed), "remaining": len(remaining), "elections_took": elected.Sub(start).Round(time.Millisecond).String(),
		"took": c.cfg.Now().Sub(start).Round(time.Millisecond).String()}).
		Info("controller: controlled shutdown handled")
	return remaining, nil
}
