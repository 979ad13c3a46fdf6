package clustertest_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/security/pwencoder"
	"samsa/zkutil"
)

// TestClusterKeystoreReloadEncryptedPassword: with password.encoder.secret
// set, kafka-configs --alter --entity-type brokers --add-config
// listener.name.sasl_ssl.ssl.keystore.location=<new>,listener.name.sasl_ssl.ssl.keystore.password=<new>
// (AlterConfigs, the --bootstrap-server path) stores the password encrypted
// in Kafka's format, never in clear, the broker decrypts it to reload the
// keystore, and DescribeConfigs answers password keys with null values.
func TestClusterKeystoreReloadEncryptedPassword(t *testing.T) {
	const secret = "encoder-secret-for-test"
	sc := brokertest.NewSecureCluster(t, 1, brokertest.WithProperty("password.encoder.secret", secret))
	id := strconv.Itoa(int(sc.Broker(0).ID()))
	newStore := sc.CA.Server(t, "broker-renewed").WritePKCS12(t, sc.Dir, "renewed.p12", "renewed-store-pw")
	newPW := "renewed-store-pw"
	reloadKeystore(t, sc, id, map[string]*string{
		"listener.name.sasl_ssl.ssl.keystore.location": &newStore,
		"listener.name.sasl_ssl.ssl.keystore.password": &newPW})

	zk := sc.ZooKeeper(t)
	raw, _, err := zk.Get("/config/brokers/" + id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), newPW) {
		t.Fatalf("/config/brokers/%s holds the password in clear: %s", id, raw)
	}
	stored, err := zk.GetEntityConfig(zkutil.ConfigTypeBroker, id)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := pwencoder.New(secret, "", "", pwencoder.DefaultKeyLength, pwencoder.DefaultIterations)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := enc.Decode(stored["listener.name.sasl_ssl.ssl.keystore.password"]); err != nil || got != newPW {
		t.Fatalf("stored password decodes to %q, %v", got, err)
	}
	if stored["listener.name.sasl_ssl.ssl.keystore.location"] != newStore {
		t.Fatalf("location stored as %q", stored["listener.name.sasl_ssl.ssl.keystore.location"])
	}

	entries, err := sc.Admin(t, nil).DescribeConfig(sarama.ConfigResource{Type: sarama.BrokerResource, Name: id})
	if err != nil {
		t.Fatal(err)
	}
	sensitive := 0
	for _, e := range entries {
		if strings.Contains(e.Value, "storepw") || strings.Contains(e.Value, secret) || strings.Contains(e.Value, newPW) {
			t.Errorf("DescribeConfigs returned a password: %s=%q", e.Name, e.Value)
		}
		if e.Name == "ssl.keystore.password" || e.Name == "password.encoder.secret" {
			if !e.Sensitive || e.Value != "" {
				t.Errorf("%s: sensitive %v value %q", e.Name, e.Sensitive, e.Value)
			}
			sensitive++
		}
	}
	if sensitive != 2 {
		t.Fatalf("DescribeConfigs listed %d of the 2 password keys", sensitive)
	}
}

// alterBrokerConfig sends IncrementalAlterConfigs SET name=value on broker
// resource res and returns the resource's error code and message.
func alterBrokerConfig(t *testing.T, cl *kgo.Client, res, name, value string) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, res
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = name, kmsg.IncrementalAlterConfigOpSet, &value
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	msg := ""
	if m := resp.Resources[0].ErrorMessage; m != nil {
		msg = *m
	}
	return resp.Resources[0].ErrorCode, msg
}

// TestClusterDynamicPasswordRefused: without password.encoder.secret a
// dynamic password config is refused with INVALID_REQUEST and Kafka's
// message, and nothing is stored; with a secret, one at the cluster-default
// entity is refused too ("Password config can be defined only at broker
// level"), while the per-broker one is stored encrypted.
func TestClusterDynamicPasswordRefused(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	id := strconv.Itoa(int(c.Broker(0).ID()))
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	code, msg := alterBrokerConfig(t, cl, id, "listener.name.plaintext.ssl.key.password", "clear-key-pw")
	if code != kerr.InvalidRequest.Code || !strings.Contains(msg, "Password encoder secret not configured") {
		t.Fatalf("without a secret: code %d %q", code, msg)
	}
	zk := c.ZooKeeper(t)
	if cfg, err := zk.GetEntityConfig(zkutil.ConfigTypeBroker, id); err == nil && len(cfg) > 0 {
		t.Fatalf("refused change stored: %v", cfg)
	}
	// A non-password key still goes through without a secret.
	if code, msg := alterBrokerConfig(t, cl, id, "log.cleaner.threads", "2"); code != 0 {
		t.Fatalf("log.cleaner.threads: %d %q", code, msg)
	}
}

func TestClusterDynamicPasswordDefaultEntityRefused(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("password.encoder.secret", "s3cret"))
	id := strconv.Itoa(int(c.Broker(0).ID()))
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	code, msg := alterBrokerConfig(t, cl, "", "listener.name.plaintext.plain.sasl.jaas.config", `x required user_a="a-secret";`)
	if code != kerr.InvalidRequest.Code || !strings.Contains(msg, "Password config can be defined only at broker level") {
		t.Fatalf("cluster default: code %d %q", code, msg)
	}
	if code, msg := alterBrokerConfig(t, cl, id, "listener.name.plaintext.ssl.key.password", "key-pw-1234"); code != 0 {
		t.Fatalf("per broker: %d %q", code, msg)
	}
	raw, _, err := c.ZooKeeper(t).Get("/config/brokers/" + id)
	if err != nil || strings.Contains(string(raw), "key-pw-1234") || !strings.Contains(string(raw), "encryptedPassword:") {
		t.Fatalf("/config/brokers/%s: %s %v", id, raw, err)
	}
}

// TestClusterPasswordSecretRotation: a password stored with the old secret
// is re-encoded with password.encoder.secret when the broker starts with
// password.encoder.old.secret set (Kafka's maybeReEncodePasswords).
func TestClusterPasswordSecretRotation(t *testing.T) {
	const firstID = 1
	old, err := pwencoder.New("old-secret", "", "", 128, 4096)
	if err != nil {
		t.Fatal(err)
	}
	storedOld, err := old.Encode("rotated-pw-5678")
	if err != nil {
		t.Fatal(err)
	}
	c := brokertest.NewCluster(t, 1, brokertest.WithFirstID(firstID),
		brokertest.WithProperty("password.encoder.secret", "new-secret"),
		brokertest.WithProperty("password.encoder.old.secret", "old-secret"),
		brokertest.WithZooKeeperSetup(func(zk *zkutil.Client) {
			if err := zk.CreatePersistentPaths(); err != nil {
				t.Fatal(err)
			}
			if err := zk.SetEntityConfig(zkutil.ConfigTypeBroker, strconv.Itoa(firstID),
				map[string]string{"listener.name.plaintext.ssl.key.password": storedOld}); err != nil {
				t.Fatal(err)
			}
		}))
	id := strconv.Itoa(int(c.Broker(0).ID()))
	if id != strconv.Itoa(firstID) {
		t.Fatalf("broker id %s", id)
	}
	newEnc, _ := pwencoder.New("new-secret", "", "", 128, 4096)
	zk := c.ZooKeeper(t)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		cfg, err := zk.GetEntityConfig(zkutil.ConfigTypeBroker, id)
		if err != nil {
			return err
		}
		if got, err := newEnc.Decode(cfg["listener.name.plaintext.ssl.key.password"]); err != nil || got != "rotated-pw-5678" {
			return fmt.Errorf("not re-encoded with the new secret yet: %q %v", got, err)
		}
		return nil
	})
}
