package group

import (
	"samsa/broker/record"
)

// kv is one __consumer_offsets record; a nil value is a tombstone.
type kv struct {
	key, value []byte
}

// buildBatch encodes records as one record batch v2 (base offset 0, no
// producer id, CreateTime = now) compressed with
// offsets.topic.compression.codec, ready for OffsetLog.Append.
func (c *Coordinator) buildBatch(kvs []kv) ([]byte, error) {
	now := c.clock.Now().UnixMilli()
	recs := make([]record.Record, len(kvs))
	for i := range kvs {
		recs[i] = record.Record{OffsetDelta: int32(i), Key: kvs[i].key, Value: kvs[i].value}
	}
	b, err := record.Build(record.NewBuildHeader(0, now), recs, record.Codec(c.cfg.CompressionCodec))
	if err != nil {
		return nil, err
	}
	return []byte(b), nil
}
