package zkutil

import "fmt"

// ProducerIDBlock is the data of /latest_producer_id_block: the last block of
// producer ids handed out, both ends inclusive.
type ProducerIDBlock struct {
	BrokerID   int32
	BlockStart int64
	BlockEnd   int64
}

type producerIDBlockJSON struct {
	Version    *int       `json:"version"`
	Broker     *int32     `json:"broker"`
	BlockStart *flexInt64 `json:"block_start"`
	BlockEnd   *flexInt64 `json:"block_end"`
}

// Encode returns {"version":1,"broker":B,"block_start":"S","block_end":"E"}.
func (b ProducerIDBlock) Encode() []byte {
	version := 1
	s, e := flexInt64(b.BlockStart), flexInt64(b.BlockEnd)
	return marshal(producerIDBlockJSON{Version: &version, Broker: &b.BrokerID, BlockStart: &s, BlockEnd: &e})
}

// DecodeProducerIDBlock parses /latest_producer_id_block data.
func DecodeProducerIDBlock(data []byte) (ProducerIDBlock, error) {
	const kind = "producer id block"
	var j producerIDBlockJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return ProducerIDBlock{}, err
	}
	if j.Broker == nil || j.BlockStart == nil || j.BlockEnd == nil {
		return ProducerIDBlock{}, malformed(kind, fmt.Errorf("missing broker, block_start or block_end"))
	}
	b := ProducerIDBlock{BrokerID: *j.Broker, BlockStart: int64(*j.BlockStart), BlockEnd: int64(*j.BlockEnd)}
	if b.BlockStart < 0 || b.BlockEnd < b.BlockStart {
		return ProducerIDBlock{}, malformed(kind, fmt.Errorf("bad block [%d, %d]", b.BlockStart, b.BlockEnd))
	}
	return b, nil
}

// FeatureLevel is a finalized feature version range in /feature.
type FeatureLevel struct {
	MinVersionLevel int16 `json:"min_version_level"`
	MaxVersionLevel int16 `json:"max_version_level"`
}

// FeatureZNode is the data of /feature (KIP-584).
type FeatureZNode struct {
	// Enabled is status 1; false is status 0 (disabled).
	Enabled  bool
	Features map[string]FeatureLevel
}

type featureJSON struct {
	Version  *int                    `json:"version"`
	Status   *int                    `json:"status"`
	Features map[string]FeatureLevel `json:"features"`
}

// Encode returns {"version":1,"status":S,"features":{...}}.
func (f FeatureZNode) Encode() []byte {
	version, status := 1, 0
	if f.Enabled {
		status = 1
	}
	feats := f.Features
	if feats == nil {
		feats = map[string]FeatureLevel{}
	}
	return marshal(featureJSON{Version: &version, Status: &status, Features: feats})
}

// DecodeFeatureZNode parses /feature data.
func DecodeFeatureZNode(data []byte) (FeatureZNode, error) {
	const kind = "feature"
	var j featureJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return FeatureZNode{}, err
	}
	if j.Status == nil {
		return FeatureZNode{}, malformed(kind, fmt.Errorf("missing status"))
	}
	return FeatureZNode{Enabled: *j.Status == 1, Features: j.Features}, nil
}
