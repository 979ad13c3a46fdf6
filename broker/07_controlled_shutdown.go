package broker

// ControlledShutdown: v0-3
//
// Behaviour:
//   - Answered by the active controller (NOT_CONTROLLER elsewhere): the
//     broker is marked shutting down, the partitions it leads move to
//     another in-sync replica, it leaves the ISR of the ones it follows,
//     and the answer lists the partitions it still leads (Kafka's
//     doControlledShutdown, in the controller package).
//   - A broker epoch older than the controller knows answers
//     STALE_BROKER_EPOCH (v2+); an unregistered broker
//     BROKER_NOT_AVAILABLE.
//   - The broker side (Shutdown with controlled.shutdown.enable) sends it
//     to the controller until nothing remains, at most
//     controlled.shutdown.max.retries times, before stopping.
//
// Version notes:
//   - v0: request header without client id (wire handles it).
//   - v1: partitions remaining grouped as v0. v2: broker epoch (KIP-380).
//   - v3: flexible.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/peer"
)

func (b *Broker) handleControlledShutdown(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ControlledShutdownRequest)
	resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
	if !b.IsController() {
		resp.ErrorCode = kerr.NotController.Code
		return resp, nil
	}
	epoch := int64(-1)
	if req.Version >= 2 {
		epoch = req.BrokerEpoch
	}
	remaining, err := b.ctrl.ControlledShutdown(r.ctx, req.BrokerID, epoch)
	if err != nil {
		resp.ErrorCode = b.errorCode(err)
		return resp, nil
	}
	for _, tp := range remaining {
		p := kmsg.NewControlledShutdownResponsePartitionsRemaining()
		p.Topic, p.Partition = tp.Topic, tp.Partition
		resp.PartitionsRemaining = append(resp.PartitionsRemaining, p)
	}
	return resp, nil
}

// controlledShutdown asks the controller to move leadership away from this
// broker before it stops (Kafka KafkaServer.controlledShutdown), retrying
// up to controlled.shutdown.max.retries times with
// controlled.shutdown.retry.backoff.ms between tries, within ctx.
func (b *Broker) controlledShutdown(ctx context.Context) error {
	backoff := time.Duration(b.cfg.ControlledShutdownRetryBackoffMs) * time.Millisecond
	var last error
	for attempt := int32(0); attempt <= b.cfg.ControlledShutdownMaxRetries && ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		remaining, err := b.sendControlledShutdown(ctx)
		if err == nil && remaining == 0 {
			b.log.Info("controlled shutdown succeeded")
			return nil
		}
		if err == nil {
			err = fmt.Errorf("broker: %d partitions still led here", remaining)
		}
		last = err
		b.log.WithError(err).Warn("controlled shutdown attempt failed; retrying")
	}
	if last == nil {
		last = ctx.Err()
	}
	return last
}

func (b *Broker) sendControlledShutdown(ctx context.Context) (int, error) {
	id := b.meta.Snapshot().ControllerID
	if id < 0 {
		return 0, errors.New("broker: no controller known")
	}
	addr, ok := b.interBrokerAddr(id)
	if !ok {
		return 0, fmt.Errorf("broker: no address for controller %d", id)
	}
	c := peer.New(addr, "controlled-shutdown-"+itoa(b.ID()), b.peerOptions()...)
	defer c.Close()
	req := kmsg.NewPtrControlledShutdownRequest()
	req.BrokerID, req.BrokerEpoch = b.ID(), b.Epoch()
	rctx, cancel := context.WithTimeout(ctx, time.Duration(b.cfg.ControllerSocketTimeoutMs)*time.Millisecond)
	defer cancel()
	kr, err := c.Request(rctx, req)
	if err != nil {
		return 0, err
	}
	resp, ok := kr.(*kmsg.ControlledShutdownResponse)
	if !ok {
		return 0, fmt.Errorf("broker: ControlledShutdown answered with %T", kr)
	}
	if resp.ErrorCode != 0 {
		return 0, kerr.ErrorForCode(resp.ErrorCode)
	}
	return len(resp.PartitionsRemaining), nil
}
