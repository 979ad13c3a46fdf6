package broker

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"time"

	"samsa/broker/storage"
	"samsa/zkutil"
)

// hostname is os.Hostname, a variable only so the advertised host of a
// wildcard listener is testable.
var hostname = os.Hostname

// resolveIdentity settles the cluster id and broker id (Kafka
// KafkaServer.startup: getOrGenerateClusterId, getBrokerMetadataAndOfflineDirs,
// getOrGenerateBrokerId) and writes meta.properties to every log dir it can.
// As Kafka, a log dir that cannot be created or read (an I/O error, or a
// regular file where the dir should be) is skipped: the storage manager
// takes it offline and the broker starts with the others (docs/broker.md,
// "Log dir failure"); only when no dir is usable does the start fail. A
// meta.properties that reads but does not parse still fails the start.
func (b *Broker) resolveIdentity() error {
	fsys := storage.OSFS{}
	byDir := map[string]storage.MetaProperties{}
	unusable := map[string]error{}
	for _, d := range b.cfg.LogDirs() {
		if err := os.MkdirAll(d, 0o755); err != nil {
			unusable[d] = err
			continue
		}
		m, found, err := storage.ReadMetaProperties(fsys, d)
		if errors.Is(err, storage.ErrStorage) {
			unusable[d] = err
			continue
		}
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		if found {
			byDir[d] = m
		}
	}
	if err := b.checkSomeLogDirUsable(unusable); err != nil {
		return err
	}
	stored, err := storage.MergeMetaProperties(byDir)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if err := stored.CheckBrokerID(b.cfg.BrokerID); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	clusterID, err := b.zk.GetOrCreateClusterID(newClusterID())
	if err != nil {
		return fmt.Errorf("broker: cluster id: %w", err)
	}
	if err := stored.CheckClusterID(clusterID); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	b.clusterID.Store(&clusterID)

	id := b.cfg.BrokerID
	switch {
	case id >= 0:
	case stored.BrokerID >= 0:
		id = stored.BrokerID
	case b.cfg.BrokerIDGenerationEnable:
		seq, err := b.zk.GenerateBrokerID()
		if err != nil {
			return fmt.Errorf("broker: generate broker id: %w", err)
		}
		id = seq + b.cfg.ReservedBrokerMaxID
	default:
		return errors.New("broker: broker.id is not set and broker.id.generation.enable is false")
	}
	b.id.Store(id)

	want := storage.MetaProperties{Version: 0, BrokerID: id, ClusterID: clusterID}
	for _, d := range b.cfg.LogDirs() {
		if m, ok := byDir[d]; ok && m == want || unusable[d] != nil {
			continue
		}
		if err := storage.WriteMetaProperties(fsys, d, want, b.opts.Now()); err != nil {
			unusable[d] = err // Kafka's checkpointBrokerMetadata takes such a dir offline
		}
	}
	return b.checkSomeLogDirUsable(unusable)
}

// checkSomeLogDirUsable logs the log dirs resolveIdentity could not use and fails when none is
// left (Kafka: "none of the specified log dirs ... can be created or validated").
func (b *Broker) checkSomeLogDirUsable(unusable map[string]error) error {
	var errs []error
	for _, d := range b.cfg.LogDirs() {
		if err := unusable[d]; err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d, err))
			b.log.WithError(err).WithField("dir", d).Error("log dir cannot be used; starting with the other log dirs")
		}
	}
	if len(errs) == len(b.cfg.LogDirs()) {
		return fmt.Errorf("broker: none of the log dirs can be used: %w", errors.Join(errs...))
	}
	return nil
}

// newClusterID returns a random Kafka Uuid in URL-safe base64 without
// padding (22 characters), as Kafka's CoreUtils.generateUuidAsBase64.
func newClusterID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	return base64.RawURLEncoding.EncodeToString(u[:])
}

// register creates /brokers/ids/<id> and records the broker epoch. A live
// registration by another session is a start failure (duplicate broker.id).
func (b *Broker) register() error {
	reg := zkutil.BrokerRegistration{
		ID:        b.ID(),
		Endpoints: b.advertisedEndpoints(),
		Rack:      b.cfg.BrokerRack,
		JMXPort:   -1,
		Timestamp: b.opts.Now().UnixMilli(),
	}
	epoch, err := b.zk.RegisterBroker(reg)
	if err != nil {
		return fmt.Errorf("broker: register broker %d: %w", b.ID(), err)
	}
	b.brokerEpoch.Store(epoch)
	b.log.WithField("broker_epoch", epoch).Info("registered in zookeeper")
	return nil
}

// onNewSession runs on zkutil's dispatcher after a session expired and a
// new one was established; it only signals sessionLoop (STYLE S8.2).
func (b *Broker) onNewSession() {
	select {
	case b.sessionCh <- struct{}{}:
	default:
	}
}

// sessionLoop re-registers the broker after each session expiry, retrying
// until it succeeds or the broker stops.
func (b *Broker) sessionLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.sessionCh:
		}
		for attempt := 0; ctx.Err() == nil; attempt++ {
			err := b.register()
			if err == nil {
				break
			}
			b.log.WithError(err).Warn("re-registration after zookeeper session expiry failed; retrying")
			t := time.NewTimer(time.Duration(min(attempt+1, 10)) * 100 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}
