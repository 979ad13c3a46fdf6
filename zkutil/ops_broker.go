package zkutil

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// BrokerInfo is a live broker: its registration and its broker epoch.
type BrokerInfo struct {
	Registration BrokerRegistration
	// Epoch is the czxid of /brokers/ids/<id> (KIP-380 broker epoch).
	Epoch int64
}

// RegisterBroker creates the ephemeral /brokers/ids/<id> with reg's JSON and
// returns the broker epoch (the znode's czxid). As in Kafka's
// registerBroker, the create and a setData at version 0 run as one multi so
// the stat comes back atomically. A znode already owned by this session is
// accepted (re-registration; its data is refreshed). A znode owned by
// another live session fails with ErrBrokerIDExists.
func (c *Client) RegisterBroker(reg BrokerRegistration) (int64, error) {
	path := BrokerIDPath(reg.ID)
	data := reg.Encode()
	if err := c.EnsurePath(BrokerIDsPath()); err != nil {
		return 0, err
	}
	for attempt := 0; attempt < 3; attempt++ {
		res, err := c.Multi(CreateOp{Path: path, Data: data, Mode: Ephemeral}, SetOp{Path: path, Data: data, Version: 0})
		if err == nil {
			epoch := res[1].Stat.Czxid
			c.log.WithField("broker", reg.ID).WithField("broker_epoch", epoch).Info("registered broker in zookeeper")
			return epoch, nil
		}
		if !errors.Is(err, ErrNodeExists) {
			return 0, err
		}
		cur, st, err := c.Get(path)
		if errors.Is(err, ErrNoNode) {
			continue // the old owner's session just ended; try again
		}
		if err != nil {
			return 0, err
		}
		if st.EphemeralOwner != c.SessionID() {
			return 0, fmt.Errorf("%w: %s exists and belongs to zookeeper session 0x%x, not ours (0x%x); "+
				"another broker is running with broker.id=%d", ErrBrokerIDExists, path, st.EphemeralOwner, c.SessionID(), reg.ID)
		}
		if !bytes.Equal(cur, data) {
			if st, err = c.Set(path, data, st.Version); err != nil {
				return 0, err
			}
		}
		return st.Czxid, nil
	}
	return 0, fmt.Errorf("zkutil: registering %s: the znode keeps changing owner", path)
}

// DeregisterBroker deletes /brokers/ids/<id> if this session owns it. A
// missing znode is not an error.
func (c *Client) DeregisterBroker(id int32) error {
	return c.deleteIfOwned(BrokerIDPath(id))
}

// GetBroker reads one broker's registration. Errors: ErrNoNode when the
// broker is not live, ErrMalformed, connection errors.
func (c *Client) GetBroker(id int32) (BrokerInfo, error) {
	data, st, err := c.Get(BrokerIDPath(id))
	if err != nil {
		return BrokerInfo{}, err
	}
	reg, err := DecodeBrokerRegistration(data)
	if err != nil {
		return BrokerInfo{}, fmt.Errorf("%s: %w", BrokerIDPath(id), err)
	}
	reg.ID = id
	return BrokerInfo{Registration: reg, Epoch: st.Czxid}, nil
}

// GetBrokerIDs returns the ids under /brokers/ids, sorted. Children that are
// not integers are skipped.
func (c *Client) GetBrokerIDs() ([]int32, error) {
	names, err := c.Children(BrokerIDsPath())
	if errors.Is(err, ErrNoNode) {
		return []int32{}, nil
	}
	if err != nil {
		return nil, err
	}
	ids := make([]int32, 0, len(names))
	for _, n := range names {
		if v, err := strconv.ParseInt(n, 10, 32); err == nil {
			ids = append(ids, int32(v))
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// GetAllBrokers reads every live broker's registration and epoch. A broker
// that disappears while being read is left out; a malformed registration is
// an error.
func (c *Client) GetAllBrokers() (map[int32]BrokerInfo, error) {
	ids, err := c.GetBrokerIDs()
	if err != nil {
		return nil, err
	}
	infos := make([]BrokerInfo, len(ids))
	errs := make([]error, len(ids))
	parallel(len(ids), func(i int) { infos[i], errs[i] = c.GetBroker(ids[i]) })
	out := make(map[int32]BrokerInfo, len(ids))
	for i, id := range ids {
		if errors.Is(errs[i], ErrNoNode) {
			continue
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[id] = infos[i]
	}
	return out, nil
}
