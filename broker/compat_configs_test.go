package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestCompatBrokerConfigsAsKafka: DescribeConfigs of a broker as Kafka
// 2.8's ConfigHelper answers it, found with franz-go's admin client: a key
// without default that is unset has a null value (not ""), synonyms end
// with the DEFAULT_CONFIG entry, and the cluster-wide default entity (empty
// name) lists only the dynamic defaults.
func TestCompatBrokerConfigsAsKafka(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("log.retention.hours", "100"))
	adm, _ := newKadm(t, c.Addrs())
	ctx := kctx(t)
	id := c.Broker(0).ID()
	find := func(rc kadm.ResourceConfig, key string) *kadm.Config {
		for i := range rc.Configs {
			if rc.Configs[i].Key == key {
				return &rc.Configs[i]
			}
		}
		t.Fatalf("%s missing from %s", key, rc.Name)
		return nil
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, id)
	if err != nil || len(rcs) != 1 {
		t.Fatalf("describe: %+v %v", rcs, err)
	}
	if cfg := find(rcs[0], "log.retention.ms"); cfg.Value != nil || cfg.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("log.retention.ms: value %q source %v, want null DEFAULT_CONFIG", *cfg.Value, cfg.Source)
	}
	cfg := find(rcs[0], "log.retention.hours")
	if cfg.Value == nil || *cfg.Value != "100" || cfg.Source != kmsg.ConfigSourceStaticBrokerConfig || len(cfg.Synonyms) != 2 ||
		cfg.Synonyms[1].Source != kmsg.ConfigSourceDefaultConfig || cfg.Synonyms[1].Value == nil || *cfg.Synonyms[1].Value != "168" {
		t.Errorf("log.retention.hours: %+v", cfg)
	}
	cfg = find(rcs[0], "log.segment.bytes")
	if cfg.Source != kmsg.ConfigSourceDefaultConfig || len(cfg.Synonyms) != 1 || *cfg.Synonyms[0].Value != "1073741824" {
		t.Errorf("log.segment.bytes: %+v", cfg)
	}

	// The cluster-wide default entity: nothing until a dynamic default is set.
	rcs, err = adm.DescribeBrokerConfigs(ctx)
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil || len(rcs[0].Configs) != 0 {
		t.Fatalf("cluster defaults before any is set: %+v %v", rcs, err)
	}
	ar, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.cleaner.backoff.ms", Value: strp("20000")}})
	if err != nil || ar[0].Err != nil {
		t.Fatalf("set a cluster default: %+v %v", ar, err)
	}
	rcs, err = adm.DescribeBrokerConfigs(ctx)
	if err != nil || len(rcs) != 1 || len(rcs[0].Configs) != 1 {
		t.Fatalf("cluster defaults: %+v %v", rcs, err)
	}
	if cfg := rcs[0].Configs[0]; cfg.Key != "log.cleaner.backoff.ms" || *cfg.Value != "20000" || cfg.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("cluster default entry: %+v", cfg)
	}
	rcs, _ = adm.DescribeBrokerConfigs(ctx, id)
	if cfg := find(rcs[0], "log.cleaner.backoff.ms"); *cfg.Value != "20000" || cfg.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || len(cfg.Synonyms) != 2 {
		t.Fatalf("broker entry under a cluster default: %+v", cfg)
	}
}
