package zkutil

import (
	"errors"
	"fmt"
	"time"
)

// GetController returns the active controller's broker id. When there is
// none it returns -1 and an error wrapping ErrNoNode.
func (c *Client) GetController() (int32, error) {
	data, _, err := c.Get(ControllerPath())
	if err != nil {
		return -1, err
	}
	info, err := DecodeControllerInfo(data)
	if err != nil {
		return -1, err
	}
	return info.BrokerID, nil
}

// GetControllerEpoch returns the value and zkVersion of /controller_epoch.
// Errors: ErrNoNode before the first election.
func (c *Client) GetControllerEpoch() (epoch int32, zkVersion int32, err error) {
	data, st, err := c.Get(ControllerEpochPath())
	if err != nil {
		return 0, 0, err
	}
	epoch, err = DecodeControllerEpoch(data)
	if err != nil {
		return 0, 0, err
	}
	return epoch, st.Version, nil
}

// ElectController tries to make brokerID the controller with Kafka 2.1+'s
// registerControllerAndIncrementControllerEpoch: read /controller_epoch (E,
// V), creating it with 0 when missing, then one multi {create ephemeral
// /controller, setData /controller_epoch = E+1 at version V}. On success it
// returns the new epoch and the zkVersion of /controller_epoch, which fences
// every later controller write. If /controller already names this broker
// under this session with epoch E+1 (a retried request) that counts as
// success. Errors: ErrControllerExists when another broker holds
// /controller, ErrControllerMoved when the epoch moved under us.
func (c *Client) ElectController(brokerID int32) (epoch int32, epochZkVersion int32, err error) {
	e, v, err := c.GetControllerEpoch()
	if errors.Is(err, ErrNoNode) {
		_, err = c.Create(ControllerEpochPath(), EncodeControllerEpoch(0), Persistent)
		if err == nil || errors.Is(err, ErrNodeExists) {
			e, v, err = c.GetControllerEpoch()
		}
	}
	if err != nil {
		return 0, 0, err
	}
	info := ControllerInfo{BrokerID: brokerID, Timestamp: time.Now().UnixMilli()}
	res, err := c.Multi(
		CreateOp{Path: ControllerPath(), Data: info.Encode(), Mode: Ephemeral},
		SetOp{Path: ControllerEpochPath(), Data: EncodeControllerEpoch(e + 1), Version: v},
	)
	if err == nil {
		c.log.WithField("broker", brokerID).WithField("controller_epoch", e+1).Info("elected controller")
		return e + 1, res[1].Stat.Version, nil
	}
	if !errors.Is(err, ErrNodeExists) && !errors.Is(err, ErrBadVersion) {
		return 0, 0, err
	}
	// Lost the race, or a retry of our own successful multi.
	data, st, gerr := c.Get(ControllerPath())
	if gerr == nil {
		holder, derr := DecodeControllerInfo(data)
		if derr != nil {
			return 0, 0, derr
		}
		if holder.BrokerID == brokerID && st.EphemeralOwner == c.SessionID() {
			ce, cv, cerr := c.GetControllerEpoch()
			if cerr != nil {
				return 0, 0, cerr
			}
			if ce == e+1 {
				return ce, cv, nil
			}
		}
		return 0, 0, fmt.Errorf("%w: broker %d is controller", ErrControllerExists, holder.BrokerID)
	}
	if !errors.Is(gerr, ErrNoNode) {
		return 0, 0, gerr
	}
	return 0, 0, fmt.Errorf("%w: /controller_epoch changed during election", ErrControllerMoved)
}

// DeleteController deletes /controller, fenced by epochZkVersion (a resigning
// controller lets another broker win; Kafka triggerControllerMove). A missing
// /controller is not an error.
func (c *Client) DeleteController(epochZkVersion int32) error {
	_, err := c.fencedMulti(epochZkVersion, DeleteOp{Path: ControllerPath(), Version: AnyVersion})
	if errors.Is(err, ErrNoNode) {
		return nil
	}
	return err
}

// fencedMulti runs ops in a multi that starts with a check that
// /controller_epoch still has version epochZkVersion (KAFKA-6082). A failed
// check returns an error wrapping ErrControllerMoved. The results exclude the
// check.
func (c *Client) fencedMulti(epochZkVersion int32, ops ...Op) ([]OpResult, error) {
	all := make([]Op, 0, len(ops)+1)
	all = append(all, CheckOp{Path: ControllerEpochPath(), Version: epochZkVersion})
	all = append(all, ops...)
	res, err := c.Multi(all...)
	if len(res) > 0 {
		res = res[1:]
	}
	if err == nil {
		return res, nil
	}
	var me *MultiError
	if errors.As(err, &me) {
		switch {
		case me.Index == 0:
			return res, fmt.Errorf("%w: /controller_epoch is not at version %d: %v", ErrControllerMoved, epochZkVersion, me.Err)
		case me.Index < 0:
			// Only the header said why; look at the epoch ourselves.
			if _, st, serr := c.Exists(ControllerEpochPath()); serr == nil && st.Version != epochZkVersion {
				return res, fmt.Errorf("%w: /controller_epoch is at version %d, not %d", ErrControllerMoved, st.Version, epochZkVersion)
			}
		default:
			me.Index--
		}
	}
	return res, err
}
