package broker

import (
	"strconv"
	"time"

	"samsa/broker/replica"
	"samsa/broker/replica/remote"
)

// fetcherConfig returns the follower fetchers' settings (replica.fetch.*)
// and their source, the leaders over peer (broker/replica/remote).
func (b *Broker) fetcherConfig() replica.FetcherConfig {
	b.fetchSrc = remote.NewFetchSource(remote.Config{
		BrokerID: b.ID(),
		// peerSec (the inter-broker TLS and SASL) is set after the replica
		// manager starts: read it per client.
		PeerOptions:    b.peerOptions,
		RequestTimeout: time.Duration(b.cfg.ReplicaSocketTimeoutMs) * time.Millisecond,
		Addr:           b.interBrokerAddr,
	})
	return replica.FetcherConfig{
		Source:            b.fetchSrc,
		MaxWaitMs:         b.cfg.ReplicaFetchWaitMaxMs,
		MinBytes:          b.cfg.ReplicaFetchMinBytes,
		MaxBytes:          b.cfg.ReplicaFetchResponseMaxBytes,
		PartitionMaxBytes: b.cfg.ReplicaFetchMaxBytes,
		BackoffMs:         b.cfg.ReplicaFetchBackoffMs,
		NumFetchers:       int(b.cfg.NumReplicaFetchers),
	}
}

// itoa formats a broker id for client ids.
func itoa(v int32) string { return strconv.FormatInt(int64(v), 10) }
