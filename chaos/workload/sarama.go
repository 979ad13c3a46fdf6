package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"samsa/chaos/history"
)

func newSaramaProducer(bootstrap []string, idem bool) (sarama.SyncProducer, error) {
	cfg := saramaConfig()
	cfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	if idem {
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1
	}
	sp, err := sarama.NewSyncProducer(bootstrap, cfg)
	if err != nil {
		return nil, fmt.Errorf("workload: sarama producer: %w", err)
	}
	return sp, nil
}

// saramaConfig is every Sarama producer's configuration: Kafka 2.8,
// acks=all, bounded timeouts and retries.
func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = "samsa-chaos"
	cfg.Net.DialTimeout = 3 * time.Second
	cfg.Net.ReadTimeout = 15 * time.Second
	cfg.Net.WriteTimeout = 15 * time.Second
	cfg.Metadata.RefreshFrequency = 5 * time.Second
	cfg.Metadata.Retry.Max = 10
	cfg.Metadata.Retry.Backoff = 250 * time.Millisecond
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Timeout = 10 * time.Second
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 20
	cfg.Producer.Retry.Backoff = 250 * time.Millisecond
	return cfg
}

// produceSarama sends one record at a time (SyncProducer), paced.
func (q *Queue) produceSarama(ctx context.Context, sp sarama.SyncProducer, name string, idem bool) {
	h := q.env.History
	defer sp.Close()
	tick := pace(ctx, q.env.Rate)
	var seq int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		seq++
		v := fmt.Sprintf("%s/%d", name, seq)
		h.Add(history.Op{Process: name, Type: history.Invoke, F: history.Send, Value: v, Seq: seq, Idempotent: idem, Client: "sarama"})
		p, o, err := sp.SendMessage(&sarama.ProducerMessage{Topic: q.env.Topic, Value: sarama.StringEncoder(v)})
		op := history.Op{Process: name, F: history.Send, Value: v, Seq: seq, Idempotent: idem, Client: "sarama"}
		if err != nil {
			op.Type, op.Err = history.Info, err.Error()
		} else {
			op.Type, op.Partition, op.Offset = history.OK, p, o
		}
		h.Add(op)
	}
}

func newSaramaTxnProducer(bootstrap []string, txnID string) (sarama.SyncProducer, error) {
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Transaction.ID = txnID
	cfg.Producer.Transaction.Timeout = txnTimeout
	cfg.Producer.Transaction.Retry.Max = 20
	cfg.Producer.Transaction.Retry.Backoff = 250 * time.Millisecond
	sp, err := sarama.NewSyncProducer(bootstrap, cfg)
	if err != nil {
		return nil, fmt.Errorf("workload: sarama txn producer: %w", err)
	}
	return sp, nil
}

// saramaTxn is Sarama's transactional SyncProducer.
type saramaTxn struct{ sp sarama.SyncProducer }

func (s saramaTxn) Begin() error { return s.sp.BeginTxn() }

func (s saramaTxn) Send(vals []string) error {
	msgs := make([]*sarama.ProducerMessage, len(vals))
	for p, v := range vals {
		msgs[p] = &sarama.ProducerMessage{Topic: TxnTopic, Partition: int32(p), Value: sarama.StringEncoder(v)}
	}
	return s.sp.SendMessages(msgs)
}

func (s saramaTxn) End(commit bool) error {
	if commit {
		return s.sp.CommitTxn()
	}
	return s.sp.AbortTxn()
}

func (s saramaTxn) Fatal() bool { return s.sp.TxnStatus()&sarama.ProducerTxnFlagFatalError != 0 }
func (s saramaTxn) Close()      { _ = s.sp.Close() }
