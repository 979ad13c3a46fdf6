package clustertest_test

import (
	"strconv"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
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

// TestCompatBrokerLoggers: KIP-412 (kafka-configs --entity-type
// broker-loggers). DescribeConfigs of BROKER_LOGGER lists log4j's root
// logger with the broker's level; IncrementalAlterConfigs SET changes it at
// once; unknown loggers and levels are INVALID_CONFIG, deleting the root
// level and APPEND are INVALID_REQUEST, as Kafka 2.8.
func TestCompatBrokerLoggers(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithLogLevel(logrus.WarnLevel))
	_, cl := newKadm(t, c.Addrs())
	ctx := kctx(t)
	id := strconv.Itoa(int(c.Broker(0).ID()))
	describe := func(name string) kmsg.DescribeConfigsResponseResource {
		t.Helper()
		req := kmsg.NewPtrDescribeConfigsRequest()
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, name
		req.Resources = append(req.Resources, r)
		// Sent to the broker itself: kgo routes by the resource name.
		kresp, err := cl.Broker(int(c.Broker(0).ID())).Request(ctx, req)
		if err != nil {
			t.Fatalf("describe loggers: %v", err)
		}
		resp := kresp.(*kmsg.DescribeConfigsResponse)
		if len(resp.Resources) != 1 {
			t.Fatalf("describe loggers: %+v", resp)
		}
		return resp.Resources[0]
	}
	alter := func(logger string, op kmsg.IncrementalAlterConfigOp, value *string) int16 {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, id
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Op, cfg.Value = logger, op, value
		r.Configs = append(r.Configs, cfg)
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || len(resp.Resources) != 1 {
			t.Fatalf("alter loggers: %+v %v", resp, err)
		}
		return resp.Resources[0].ErrorCode
	}
	root := func() string {
		t.Helper()
		r := describe(id)
		if r.ErrorCode != 0 || len(r.Configs) != 1 || r.Configs[0].Name != "root" || r.Configs[0].Value == nil ||
			r.Configs[0].Source != kmsg.ConfigSourceDynamicBrokerLoggerConfig || r.Configs[0].ReadOnly {
			t.Fatalf("loggers: %+v", r)
		}
		return *r.Configs[0].Value
	}
	if lv := root(); lv != "WARN" {
		t.Fatalf("root level %s, want WARN", lv)
	}
	if code := alter("root", kmsg.IncrementalAlterConfigOpSet, strp("ERROR")); code != 0 {
		t.Fatalf("set ERROR: %v", kerr.ErrorForCode(code))
	}
	if lv := root(); lv != "ERROR" {
		t.Fatalf("root level %s after SET, want ERROR", lv)
	}
	for _, bad := range []struct {
		logger string
		op     kmsg.IncrementalAlterConfigOp
		value  *string
		want   *kerr.Error
	}{
		{"kafka.controller", kmsg.IncrementalAlterConfigOpSet, strp("INFO"), kerr.InvalidConfig},
		{"root", kmsg.IncrementalAlterConfigOpSet, strp("LOUD"), kerr.InvalidConfig},
		{"root", kmsg.IncrementalAlterConfigOpDelete, nil, kerr.InvalidRequest},
		{"root", kmsg.IncrementalAlterConfigOpAppend, strp("INFO"), kerr.InvalidRequest},
	} {
		if code := alter(bad.logger, bad.op, bad.value); code != bad.want.Code {
			t.Errorf("%s %v %v: %v, want %v", bad.logger, bad.op, bad.value, kerr.ErrorForCode(code), bad.want)
		}
	}
	if code := alter("root", kmsg.IncrementalAlterConfigOpSet, strp("WARN")); code != 0 || root() != "WARN" {
		t.Fatalf("set WARN back: %v", kerr.ErrorForCode(code))
	}
	if r := describe(""); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("describe loggers of no broker: %+v", r)
	}
	if r := describe("99"); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("describe loggers of another broker: %+v", r)
	}
}
