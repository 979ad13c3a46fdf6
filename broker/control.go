package broker

// staleBrokerEpoch reports whether a control request's broker epoch names an
// older registration of this broker (KIP-380, Kafka 2.8
// KafkaApis.isBrokerEpochStale). -1 means "not checked": requests below the
// version that carries the field, and tools, send it.
func (b *Broker) staleBrokerEpoch(requestEpoch int64) bool {
	if requestEpoch == -1 {
		return false
	}
	return requestEpoch < b.brokerEpoch.Load()
}
