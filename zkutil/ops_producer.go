package zkutil

import (
	"errors"
	"fmt"
	"math"
)

// ProducerIDBlockSize is the number of producer ids a broker takes at once.
const ProducerIDBlockSize = 1000

// AllocateProducerIDBlock takes the next block of producer ids for brokerID
// with a conditional write on /latest_producer_id_block, retrying on
// conflicts (Kafka 2.8 ProducerIdManager.getNewProducerIdBlock). The first
// block is 0..999.
func (c *Client) AllocateProducerIDBlock(brokerID int32) (ProducerIDBlock, error) {
	path := LatestProducerIDBlockPath()
	for attempt := 0; attempt < 100; attempt++ {
		data, st, err := c.Get(path)
		if errors.Is(err, ErrNoNode) {
			if _, err := c.CreateRecursive(path, nil, Persistent); err != nil && !errors.Is(err, ErrNodeExists) {
				return ProducerIDBlock{}, err
			}
			continue
		}
		if err != nil {
			return ProducerIDBlock{}, err
		}
		next := ProducerIDBlock{BrokerID: brokerID, BlockStart: 0, BlockEnd: ProducerIDBlockSize - 1}
		if len(data) > 0 {
			prev, err := DecodeProducerIDBlock(data)
			if err != nil {
				return ProducerIDBlock{}, err
			}
			if prev.BlockEnd > math.MaxInt64-ProducerIDBlockSize {
				return ProducerIDBlock{}, fmt.Errorf("zkutil: producer ids exhausted (last block ends at %d)", prev.BlockEnd)
			}
			next.BlockStart, next.BlockEnd = prev.BlockEnd+1, prev.BlockEnd+ProducerIDBlockSize
		}
		_, err = c.Set(path, next.Encode(), st.Version)
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, ErrBadVersion) {
			return ProducerIDBlock{}, err
		}
	}
	return ProducerIDBlock{}, fmt.Errorf("zkutil: too much contention on %s", path)
}
