package zkutil

import (
	"bytes"
	"fmt"
	"strconv"
)

// ControllerInfo is the data of /controller (Kafka ControllerZNode).
type ControllerInfo struct {
	// BrokerID is the active controller's broker id.
	BrokerID int32
	// Timestamp is the election time in ms since the epoch.
	Timestamp int64
}

type controllerJSON struct {
	Version   *int       `json:"version"`
	BrokerID  *int32     `json:"brokerid"`
	Timestamp *flexInt64 `json:"timestamp"`
}

// Encode returns {"version":1,"brokerid":N,"timestamp":"ms"}.
func (c ControllerInfo) Encode() []byte {
	version := 1
	ts := flexInt64(c.Timestamp)
	return marshal(controllerJSON{Version: &version, BrokerID: &c.BrokerID, Timestamp: &ts})
}

// DecodeControllerInfo parses /controller data: the JSON form (v1, and v2 of
// 3.4+ whose kraftControllerEpoch is ignored) or the bare integer some 0.8
// brokers wrote.
func DecodeControllerInfo(data []byte) (ControllerInfo, error) {
	const kind = "controller"
	if v, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 32); err == nil {
		return ControllerInfo{BrokerID: int32(v)}, nil
	}
	var j controllerJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return ControllerInfo{}, err
	}
	if j.BrokerID == nil {
		return ControllerInfo{}, malformed(kind, fmt.Errorf("missing brokerid"))
	}
	c := ControllerInfo{BrokerID: *j.BrokerID}
	if j.Timestamp != nil {
		c.Timestamp = int64(*j.Timestamp)
	}
	return c, nil
}

// EncodeControllerEpoch returns the /controller_epoch data: ASCII decimal.
func EncodeControllerEpoch(epoch int32) []byte { return []byte(itoa(epoch)) }

// DecodeControllerEpoch parses the ASCII decimal in /controller_epoch.
func DecodeControllerEpoch(data []byte) (int32, error) {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 32)
	if err != nil || v < 0 {
		return 0, malformed("controller epoch", fmt.Errorf("not a non-negative integer: %.32q", data))
	}
	return int32(v), nil
}

type clusterIDJSON struct {
	Version *flexInt64 `json:"version"`
	ID      *string    `json:"id"`
}

// EncodeClusterID returns {"version":"1","id":"..."} (version is a string).
func EncodeClusterID(id string) []byte {
	v := flexInt64(1)
	return marshal(clusterIDJSON{Version: &v, ID: &id})
}

// DecodeClusterID parses /cluster/id data and returns the id.
func DecodeClusterID(data []byte) (string, error) {
	const kind = "cluster id"
	var j clusterIDJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return "", err
	}
	if j.ID == nil || *j.ID == "" {
		return "", malformed(kind, fmt.Errorf("missing id"))
	}
	return *j.ID, nil
}
