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

// multiPartitionSarama is multiPartitionKgo with Sarama's transactional
// producer.
func (t *Txn) multiPartitionSarama(ctx context.Context, name string) {
	h := t.env.History
	var sp sarama.SyncProducer
	defer func() {
		if sp != nil {
			sp.Close()
		}
	}()
	tick := pace(ctx, txnRate)
	for n := int64(1); ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		if sp == nil {
			var err error
			if sp, err = newSaramaTxnProducer(t.env.Bootstrap, "samsa-chaos-"+name); err != nil {
				sp = nil
				continue
			}
		}
		id := fmt.Sprintf("%s/%d", name, n)
		h.Add(history.Op{Process: name, Type: history.Invoke, F: history.Txn, Value: id, Client: "sarama"})
		if err := sp.BeginTxn(); err != nil {
			endTxn(h, name, id, false, err)
			sp.Close()
			sp = nil
			continue
		}
		msgs := make([]*sarama.ProducerMessage, txnPartitions)
		for p := range msgs {
			v := fmt.Sprintf("%s/%d", id, p)
			h.Add(history.Op{Process: name, Type: history.Invoke, F: history.TxnSend, Value: v, Partition: int32(p), TxnID: id, Client: "sarama"})
			msgs[p] = &sarama.ProducerMessage{Topic: TxnTopic, Partition: int32(p), Value: sarama.StringEncoder(v)}
		}
		serr := sp.SendMessages(msgs)
		commit := serr == nil && n%txnAbortEvery != 0
		var err error
		if commit {
			err = sp.CommitTxn()
		} else if err = sp.AbortTxn(); err == nil {
			err = serr // why it aborted, for the history
		}
		endTxn(h, name, id, commit, err)
		if err != nil || sp.TxnStatus()&sarama.ProducerTxnFlagFatalError != 0 {
			sp.Close()
			sp = nil
		}
	}
}
