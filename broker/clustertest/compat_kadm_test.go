package clustertest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// newKadm returns a franz-go admin client of the cluster, closed at cleanup.
func newKadm(t *testing.T, addrs []string, opts ...kgo.Opt) (*kadm.Client, *kgo.Client) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.RequestRetries(20),
		kgo.RetryTimeout(20 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(15000)
	return adm, cl
}

func kctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func configValue(rc kadm.ResourceConfig, key string) string {
	for _, c := range rc.Configs {
		if c.Key == key && c.Value != nil {
			return *c.Value
		}
	}
	return "<absent>"
}

// TestCompatKadmTopicsAndConfigs: franz-go's admin client creates topics
// with configs (and with the KIP-464 defaults -1/-1), lists, describes and
// alters configs (AlterConfigs and IncrementalAlterConfigs), describes
// broker configs, adds partitions, deletes topics and reads ApiVersions,
// DescribeCluster and broker metadata.
func TestCompatKadmTopicsAndConfigs(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("num.partitions", "3"))
	adm, kcl := newKadm(t, c.Addrs())
	ctx := kctx(t)
	id := c.Broker(0).ID()

	kadmCheckCreateTopics(t, ctx, adm)
	kadmCheckTopicConfigs(t, ctx, adm)
	kadmCheckBrokerConfigs(t, ctx, adm, id)
	kadmCheckPartitionsAndDelete(t, ctx, adm)
	kadmCheckClusterInfo(t, ctx, adm, kcl, id)
}

// kadmCheckCreateTopics: CreateTopics with configs, the broker defaults
// (KIP-464), its errors and validate-only; ka and kb are listed after.
func kadmCheckCreateTopics(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	retention := "3600000"
	res, err := adm.CreateTopics(ctx, 2, 1, map[string]*string{"retention.ms": &retention, "cleanup.policy": strp("compact")}, "ka", "kb")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil || r.NumPartitions != 2 || r.ReplicationFactor != 1 {
			t.Fatalf("create %s: %+v", r.Topic, r)
		}
	}
	// KIP-464: -1 partitions and -1 replication factor take the broker defaults.
	r, err := adm.CreateTopic(ctx, -1, -1, nil, "kdefault")
	if err != nil || r.Err != nil || r.NumPartitions != 3 || r.ReplicationFactor != 1 {
		t.Fatalf("create with defaults: %+v %v", r, err)
	}
	if r, _ := adm.CreateTopic(ctx, 1, 1, nil, "ka"); !errors.Is(r.Err, kerr.TopicAlreadyExists) {
		t.Fatalf("create twice: %+v", r)
	}
	if r, _ := adm.CreateTopic(ctx, 1, 5, nil, "ktoobig"); !errors.Is(r.Err, kerr.InvalidReplicationFactor) {
		t.Fatalf("replication factor above the broker count: %+v", r)
	}
	if r, _ := adm.CreateTopic(ctx, 1, 1, map[string]*string{"no.such.config": strp("1")}, "kbadcfg"); !errors.Is(r.Err, kerr.InvalidConfig) {
		t.Fatalf("unknown config: %+v", r)
	}
	v, err := adm.ValidateCreateTopics(ctx, 4, 1, nil, "kvalidate")
	if err != nil || v["kvalidate"].Err != nil {
		t.Fatalf("validate only: %+v %v", v, err)
	}

	brokertest.WaitFor(t, 15*time.Second, func() error {
		td, err := adm.ListTopics(ctx)
		if err != nil {
			return err
		}
		if !td.Has("ka") || !td.Has("kb") || !td.Has("kdefault") || td.Has("kvalidate") {
			return fmt.Errorf("topics %v", td.Names())
		}
		for _, n := range []string{"ka", "kb", "kdefault"} {
			for _, p := range td[n].Partitions {
				if p.Leader < 0 || p.Err != nil {
					return fmt.Errorf("%s: %+v", n, p)
				}
			}
		}
		return nil
	})
}

// kadmCheckTopicConfigs: ka's configs are described, altered
// incrementally and replaced.
func kadmCheckTopicConfigs(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(ctx, "ka", "nope")
	if err != nil {
		t.Fatal(err)
	}
	ka, err := rcs.On("ka", nil)
	if err != nil || configValue(ka, "retention.ms") != "3600000" || configValue(ka, "cleanup.policy") != "compact" {
		t.Fatalf("describe ka: %+v %v", ka, err)
	}
	if nope, _ := rcs.On("nope", nil); !errors.Is(nope.Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("describe unknown topic: %+v", nope)
	}

	// IncrementalAlterConfigs: set, append to a list, delete.
	ar, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: strp("7200000")},
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: strp("delete")},
		{Op: kadm.SetConfig, Name: "segment.bytes", Value: strp("1048576")},
	}, "ka")
	if err != nil || len(ar) != 1 || ar[0].Err != nil {
		t.Fatalf("incremental alter: %+v %v", ar, err)
	}
	rcs, _ = adm.DescribeTopicConfigs(ctx, "ka")
	if ka := rcs[0]; configValue(ka, "retention.ms") != "7200000" || configValue(ka, "cleanup.policy") != "compact,delete" || configValue(ka, "segment.bytes") != "1048576" {
		t.Fatalf("after incremental alter: %+v", ka.Configs)
	}
	ar, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SubtractConfig, Name: "cleanup.policy", Value: strp("compact")},
		{Op: kadm.DeleteConfig, Name: "segment.bytes"},
	}, "ka")
	if err != nil || ar[0].Err != nil {
		t.Fatalf("incremental subtract/delete: %+v %v", ar, err)
	}
	rcs, _ = adm.DescribeTopicConfigs(ctx, "ka")
	if ka := rcs[0]; configValue(ka, "cleanup.policy") != "delete" || configValue(ka, "segment.bytes") != "1073741824" {
		t.Fatalf("after subtract/delete: %+v", ka.Configs)
	}
	if ar, _ := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: strp("abc")}}, "ka"); len(ar) != 1 || !errors.Is(ar[0].Err, kerr.InvalidConfig) {
		t.Fatalf("invalid value: %+v", ar)
	}
	// AlterConfigs (replace all): what is not named returns to its default.
	ar, err = adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "max.message.bytes", Value: strp("50000")}}, "ka")
	if err != nil || ar[0].Err != nil {
		t.Fatalf("alter state: %+v %v", ar, err)
	}
	rcs, _ = adm.DescribeTopicConfigs(ctx, "ka")
	if ka := rcs[0]; configValue(ka, "max.message.bytes") != "50000" || configValue(ka, "retention.ms") != "604800000" {
		t.Fatalf("after alter state: %+v", ka.Configs)
	}
}

// kadmCheckBrokerConfigs: broker id's configs are described and altered.
func kadmCheckBrokerConfigs(t *testing.T, ctx context.Context, adm *kadm.Client, id int32) {
	t.Helper()
	bcs, err := adm.DescribeBrokerConfigs(ctx, id)
	if err != nil || len(bcs) != 1 || bcs[0].Err != nil {
		t.Fatalf("describe broker configs: %+v %v", bcs, err)
	}
	if v := configValue(bcs[0], "num.partitions"); v != "3" {
		t.Fatalf("broker num.partitions = %s", v)
	}
	if v := configValue(bcs[0], "broker.id"); v != fmt.Sprint(id) {
		t.Fatalf("broker broker.id = %s", v)
	}
	if _, err := adm.DescribeBrokerConfigs(ctx); err != nil {
		t.Fatalf("describe cluster-default broker configs: %v", err)
	}
	bar, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: strp("86400000")}}, id)
	if err != nil || bar[0].Err != nil {
		t.Fatalf("alter broker config: %+v %v", bar, err)
	}
	bcs, _ = adm.DescribeBrokerConfigs(ctx, id)
	if v := configValue(bcs[0], "log.retention.ms"); v != "86400000" {
		t.Fatalf("broker log.retention.ms after alter = %s", v)
	}
}

// kadmCheckPartitionsAndDelete: kb grows to 5 partitions (not shrinks),
// then is deleted.
func kadmCheckPartitionsAndDelete(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	cp, err := adm.CreatePartitions(ctx, 2, "kb")
	if err != nil || cp["kb"].Err != nil {
		t.Fatalf("create partitions: %+v %v", cp, err)
	}
	up, err := adm.UpdatePartitions(ctx, 5, "kb")
	if err != nil || up["kb"].Err != nil {
		t.Fatalf("update partitions: %+v %v", up, err)
	}
	if up, _ := adm.UpdatePartitions(ctx, 2, "kb"); !errors.Is(up["kb"].Err, kerr.InvalidPartitions) {
		t.Fatalf("shrinking partitions: %+v", up)
	}
	brokertest.WaitFor(t, 15*time.Second, func() error {
		td, err := adm.ListTopics(ctx, "kb")
		if err != nil || len(td["kb"].Partitions) != 5 {
			return fmt.Errorf("kb: %+v %v", td["kb"], err)
		}
		return nil
	})

	dr, err := adm.DeleteTopics(ctx, "kb", "nope")
	if err != nil || dr["kb"].Err != nil || !errors.Is(dr["nope"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete topics: %+v %v", dr, err)
	}
}

// kadmCheckClusterInfo: ApiVersions, metadata, the broker list and
// DescribeCluster describe the one-broker cluster.
func kadmCheckClusterInfo(t *testing.T, ctx context.Context, adm *kadm.Client, kcl *kgo.Client, id int32) {
	t.Helper()
	av, err := adm.ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	av.Each(func(b kadm.BrokerApiVersions) {
		if b.Err != nil {
			t.Fatalf("api versions of %d: %v", b.NodeID, b.Err)
		}
		// franz-go guesses the Kafka version from the advertised keys;
		// without SASL and transactions it cannot say "v2.8", only log.
		t.Logf("broker %d: franz-go guesses Kafka %q", b.NodeID, b.VersionGuess())
		if v, ok := b.KeyMaxVersion(3); !ok || v != 11 {
			t.Errorf("broker %d: Metadata max version %d %v, want 11", b.NodeID, v, ok)
		}
	})
	md, err := adm.BrokerMetadata(ctx)
	if err != nil || md.Controller != id || len(md.Brokers) != 1 || md.Cluster == "" {
		t.Fatalf("broker metadata: %+v %v", md, err)
	}
	bd, err := adm.ListBrokers(ctx)
	if err != nil || len(bd) != 1 || bd[0].NodeID != id {
		t.Fatalf("list brokers: %+v %v", bd, err)
	}
	// DescribeCluster (KIP-700), which Java's Admin uses since 2.8.
	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, kcl)
	if err != nil || dc.ErrorCode != 0 || dc.ClusterID != md.Cluster || dc.ControllerID != id || len(dc.Brokers) != 1 ||
		dc.Brokers[0].NodeID != id || dc.Brokers[0].Host == "" || dc.Brokers[0].Port == 0 {
		t.Fatalf("describe cluster: %+v %v", dc, err)
	}
}
