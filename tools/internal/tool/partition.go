package tool

// Partition-level helpers several families share: Kafka's comma-joined id
// lists, a partition consumer's forwarding loop and a failed send worded as
// ErrorLoggingCallback.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/IBM/sarama"
)

// JoinInt32 joins ids with commas, as Kafka's tools print replica lists.
func JoinInt32(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ",")
}

// ForwardPartition forwards pc's messages to msgs and its errors to errs
// (dropped when errs is full) until pc closes or ctx ends.
func ForwardPartition(ctx context.Context, pc sarama.PartitionConsumer, msgs chan<- *sarama.ConsumerMessage, errs chan<- error) {
	for {
		select {
		case m, ok := <-pc.Messages():
			if !ok {
				return
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
		case e, ok := <-pc.Errors():
			if !ok {
				return
			}
			select {
			case errs <- e:
			default:
			}
		case <-ctx.Done():
			return
		}
	}
}

// SendError words a failed send like Kafka's ErrorLoggingCallback.
func SendError(msg *sarama.ProducerMessage, err error) error {
	describe := func(e sarama.Encoder) string {
		if e == nil {
			return "null"
		}
		return fmt.Sprintf("%d bytes", e.Length())
	}
	var ke sarama.KError
	if errors.As(err, &ke) {
		err = ke
	}
	return Errorf("ERROR Error when sending message to topic %s with key: %s, value: %s with error: %v", msg.Topic, describe(msg.Key), describe(msg.Value), err)
}
