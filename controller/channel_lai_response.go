package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/kafka"
)

// leaderAndIsrOutcome is what the controller keeps of a broker's LeaderAndIsr answer for its
// event goroutine (Kafka's LeaderAndIsrResponseReceived): the partitions the broker hosts on
// a failed log dir and those it hosts fine. It is built on the sender goroutine and holds no
// kmsg type.
type leaderAndIsrOutcome struct {
	offline []kafka.TopicPartition // answered KAFKA_STORAGE_ERROR (56): the replica's log dir failed
	online  []kafka.TopicPartition // answered NONE
}

// leaderAndIsrOutcomeOf reads a delivered LeaderAndIsr answer. ok=false when there is nothing
// for the controller to do: an unexpected response type, a top-level error (Kafka logs it
// and ignores the answer; logLeaderAndIsrResponse has logged it), or no partition answered
// NONE or KAFKA_STORAGE_ERROR. Other partition errors are neither online nor offline, as in
// Kafka. names maps the request's topic ids to names (a v5 answer names topics by id only);
// partitions of unknown topic ids are skipped.
func leaderAndIsrOutcomeOf(resp kmsg.Response, names map[[16]byte]string) (leaderAndIsrOutcome, bool) {
	var o leaderAndIsrOutcome
	r, ok := resp.(*kmsg.LeaderAndISRResponse)
	if !ok || r.ErrorCode != 0 {
		return o, false
	}
	add := func(topic string, partition int32, code int16) {
		if topic == "" {
			return
		}
		tp := kafka.TopicPartition{Topic: topic, Partition: partition}
		switch code {
		case 0:
			o.online = append(o.online, tp)
		case kerr.KafkaStorageError.Code:
			o.offline = append(o.offline, tp)
		}
	}
	for _, p := range r.Partitions {
		add(p.Topic, p.Partition, p.ErrorCode)
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			topic := p.Topic
			if topic == "" {
				topic = names[t.TopicID]
			}
			add(topic, p.Partition, p.ErrorCode)
		}
	}
	return o, len(o.offline)+len(o.online) > 0
}
