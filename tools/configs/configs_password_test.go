package configs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
	"samsa/broker/security/pwencoder"
	"samsa/tools/internal/tooltest"
	"samsa/zkutil"
)

const (
	testEncoderSecret = "tool-encoder-secret"
	secretRequired    = "requirement failed: password.encoder.secret must be specified to update Set(%s)." +
		" Other password encoder configs like cipher algorithm and iterations may also be specified" +
		" to override the default encoding parameters. Password encoder configs will not be persisted" +
		" in ZooKeeper.\n"
)

// decodeStored decodes a stored password with testEncoderSecret (the
// encoder's own algorithm parameters come from the stored string).
func decodeStored(t *testing.T, stored string) string {
	t.Helper()
	enc, err := pwencoder.New(testEncoderSecret, "", "", pwencoder.DefaultKeyLength, pwencoder.DefaultIterations)
	if err != nil {
		t.Fatal(err)
	}
	clear, err := enc.Decode(stored)
	if err != nil {
		t.Fatalf("stored value %q does not decode: %v", stored, err)
	}
	return clear
}

// TestToolConfigsZKPasswordRefused: kafka-configs --zookeeper refuses a
// broker password config without password.encoder.secret (Kafka's
// message), an ssl.* security config without a listener prefix, and a
// per-broker config on the cluster default; none of them writes anything.
func TestToolConfigsZKPasswordRefused(t *testing.T) {
	zk, c := tooltest.ZKCluster(t)
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--broker", "1", "--add-config", "listener.name.internal.ssl.keystore.password=clear-store-pw,log.cleaner.threads=2"},
			fmt.Sprintf(secretRequired, "listener.name.internal.ssl.keystore.password")},
		{[]string{"--broker", "1", "--add-config", "listener.name.internal.plain.sasl.jaas.config=x,listener.name.internal.ssl.key.password=k,password.encoder.iterations=8192"},
			fmt.Sprintf(secretRequired, "listener.name.internal.plain.sasl.jaas.config, listener.name.internal.ssl.key.password")},
		{[]string{"--broker", "1", "--add-config", "ssl.keystore.password=clear-store-pw,password.encoder.secret=" + testEncoderSecret},
			"These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.password)\n"},
		{[]string{"--entity-type", "brokers", "--entity-default", "--add-config", "listener.name.internal.ssl.keystore.password=clear-store-pw,password.encoder.secret=" + testEncoderSecret},
			"Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.internal.ssl.keystore.password)\n"},
	} {
		out, errOut, code := runTool(t, "", append([]string{"kafka-configs", "--zookeeper", zk, "--alter"}, tc.args...)...)
		if code != 1 || errOut != tc.wantErr || strings.Contains(out, "Completed") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and stderr %q", tc.args, code, out, errOut, tc.wantErr)
		}
	}
	for _, entity := range []string{"1", "<default>"} {
		if cfg, err := c.GetEntityConfig(zkutil.ConfigTypeBroker, entity); (err != nil && !errors.Is(err, zkutil.ErrNoNode)) || len(cfg) > 0 {
			t.Errorf("a refused change left /config/brokers/%s = %v (%v)", entity, cfg, err)
		}
	}
}

// TestToolConfigsZKPasswordEncoded: with password.encoder.* among the
// added configs, every password config (listener- and mechanism-prefixed)
// is stored in Kafka's PasswordEncoder format with the given cipher and
// iterations, the encoder configs are not stored, the other configs are
// stored as given, and --describe prints the stored (encrypted) values as
// Kafka's --zookeeper describe does.
func TestToolConfigsZKPasswordEncoded(t *testing.T) {
	zk, c := tooltest.ZKCluster(t)
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";`
	out, errOut, code := runTool(t, "", "kafka-configs", "--zookeeper", zk, "--alter", "--broker", "1", "--add-config",
		"listener.name.internal.ssl.keystore.password=clear-store-pw,listener.name.internal.ssl.keystore.location=/etc/samsa/internal.p12,"+
			"listener.name.internal.plain.sasl.jaas.config="+jaas+",password.encoder.secret="+testEncoderSecret+
			",password.encoder.cipher.algorithm=AES/GCM/NoPadding,password.encoder.iterations=8192,password.encoder.key.length=256")
	if code != 0 || out != "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\n"+
		"Use --bootstrap-server instead to specify a broker to connect to.\n"+
		"Completed updating config for entity: brokers '1'.\n" {
		t.Fatalf("alter: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	raw, _, err := c.Get("/config/brokers/1")
	if err != nil {
		t.Fatal(err)
	}
	for _, clear := range []string{"clear-store-pw", "bob-secret", testEncoderSecret, "password.encoder"} {
		if strings.Contains(string(raw), clear) {
			t.Errorf("/config/brokers/1 holds %q: %s", clear, raw)
		}
	}
	stored, err := c.GetEntityConfig(zkutil.ConfigTypeBroker, "1")
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 || stored["listener.name.internal.ssl.keystore.location"] != "/etc/samsa/internal.p12" {
		t.Fatalf("stored %v", stored)
	}
	pw := stored["listener.name.internal.ssl.keystore.password"]
	for _, field := range []string{"cipherAlgorithm:AES/GCM/NoPadding", "iterations:8192", "keyLength:256", "passwordLength:14"} {
		if !strings.Contains(pw, field) {
			t.Errorf("stored password %q lacks %s", pw, field)
		}
	}
	if got := decodeStored(t, pw); got != "clear-store-pw" {
		t.Errorf("keystore password decodes to %q", got)
	}
	if got := decodeStored(t, stored["listener.name.internal.plain.sasl.jaas.config"]); got != jaas {
		t.Errorf("jaas config decodes to %q", got)
	}

	out, _, code = runTool(t, "", "kafka-configs", "--zookeeper", zk, "--describe", "--broker", "1")
	want := "Configs for brokers '1' are listener.name.internal.plain.sasl.jaas.config=" + stored["listener.name.internal.plain.sasl.jaas.config"] +
		",listener.name.internal.ssl.keystore.location=/etc/samsa/internal.p12,listener.name.internal.ssl.keystore.password=" + pw + "\n"
	if code != 0 || !strings.HasSuffix(out, want) {
		t.Errorf("describe: exit %d, stdout %q, want it to end %q", code, out, want)
	}

	// A later non-password change keeps the stored passwords as they are.
	if _, errOut, code := runTool(t, "", "kafka-configs", "--zookeeper", zk, "--alter", "--broker", "1", "--add-config", "log.cleaner.threads=2"); code != 0 {
		t.Fatalf("alter log.cleaner.threads: exit %d %q", code, errOut)
	}
	if again, err := c.GetEntityConfig(zkutil.ConfigTypeBroker, "1"); err != nil || again["listener.name.internal.ssl.keystore.password"] != pw || again["log.cleaner.threads"] != "2" {
		t.Errorf("after a second alter: %v, %v", again, err)
	}
}

// TestToolConfigsZKPasswordBrokerDecodes: kafka-configs --zookeeper
// refuses a keystore swap while the broker runs (Kafka's bootstrap-only
// rule, nothing written); with the broker stopped the new location and
// password (encrypted with the broker's password.encoder.secret) are
// stored, and the broker serves that keystore once it starts again;
// --describe --bootstrap-server never shows a password.
func TestToolConfigsZKPasswordBrokerDecodes(t *testing.T) {
	sc := brokertest.NewSecureCluster(t, 1, brokertest.WithProperty("password.encoder.secret", testEncoderSecret))
	brokerID := sc.Broker(0).ID()
	id := strconv.Itoa(int(brokerID))
	waitCN := func(want string) {
		t.Helper()
		brokertest.WaitFor(t, 30*time.Second, func() error {
			if cn, err := sc.ServerCN(0); err != nil || cn != want {
				return fmt.Errorf("new connections get %q (%v), want %q", cn, err, want)
			}
			return nil
		})
	}
	waitCN("broker")
	newStore := sc.CA.Server(t, "broker-renewed").WritePKCS12(t, sc.Dir, "renewed.p12", "renewed-store-pw")
	args := []string{"kafka-configs", "--zookeeper", sc.ZKConnect(), "--alter", "--broker", id, "--add-config",
		"listener.name.sasl_ssl.ssl.keystore.location=" + newStore + ",listener.name.sasl_ssl.ssl.keystore.password=renewed-store-pw,password.encoder.secret=" + testEncoderSecret}
	zk := sc.ZooKeeper(t)
	out, errOut, code := runTool(t, "", args...)
	wantErr := fmt.Sprintf(brokerRunningMsg, "listener.name.sasl_ssl.ssl.keystore.location, listener.name.sasl_ssl.ssl.keystore.password, password.encoder.secret",
		"when broker "+id+" is running.")
	if code != 1 || errOut != wantErr {
		t.Fatalf("alter while running: exit %d, stdout %q, stderr %q; want exit 1, stderr %q", code, out, errOut, wantErr)
	}
	if stored, err := zk.GetEntityConfig(zkutil.ConfigTypeBroker, id); err == nil && len(stored) > 0 {
		t.Fatalf("a refused alter stored %v", stored)
	}

	sc.Kill(0)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if _, err := zk.GetBroker(brokerID); !errors.Is(err, zkutil.ErrNoNode) {
			return fmt.Errorf("broker %s still registered (%v)", id, err)
		}
		return nil
	})
	if out, errOut, code = runTool(t, "", args...); code != 0 {
		t.Fatalf("alter with the broker stopped: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	stored, err := zk.GetEntityConfig(zkutil.ConfigTypeBroker, id)
	if err != nil || decodeStored(t, stored["listener.name.sasl_ssl.ssl.keystore.password"]) != "renewed-store-pw" {
		t.Fatalf("stored %v, %v", stored, err)
	}
	sc.Restart(0)
	waitCN("broker-renewed")

	// The broker's DescribeConfigs never hands out a password, clear or
	// encrypted. (It does not list listener-prefixed dynamic keys yet, so
	// Kafka's "listener.name.sasl_ssl.ssl.keystore.password=null
	// sensitive=true" line is not there to check.)
	out, errOut, code = runTool(t, "", "kafka-configs", "--bootstrap-server", sc.Addr(0), "--describe", "--broker", id, "--all")
	if code != 0 || !strings.Contains(out, "  ssl.keystore.password=null sensitive=true synonyms={") ||
		strings.Contains(out, "renewed-store-pw") || strings.Contains(out, "encryptedPassword") {
		t.Errorf("describe --bootstrap-server: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestToolConfigsBrokerConfigLevels: Kafka's per-listener and per-broker
// rules on the names alone.
func TestToolConfigsBrokerConfigLevels(t *testing.T) {
	for _, tc := range []struct {
		name, base          string
		prefixed, password  bool
		atDefault, atBroker bool // allowed
	}{
		{"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config", "sasl.jaas.config", true, true, false, true},
		{"listener.name.internal.ssl.keystore.password", "ssl.keystore.password", true, true, false, true},
		{"listener.name.internal.ssl.keystore.location", "ssl.keystore.location", true, false, false, true},
		{"listener.name.internal.max.connections", "max.connections", true, false, true, true},
		{"ssl.truststore.password", "ssl.truststore.password", false, true, false, false},
		{"advertised.listeners", "advertised.listeners", false, false, false, true},
		{"log.retention.ms", "log.retention.ms", false, false, true, true},
		{"listener.name.nodot", "listener.name.nodot", false, false, true, true},
	} {
		base, prefixed := listenerBaseName(tc.name)
		if base != tc.base || prefixed != tc.prefixed || isPasswordConfig(tc.name) != tc.password {
			t.Errorf("%s: base %q prefixed %v password %v", tc.name, base, prefixed, isPasswordConfig(tc.name))
		}
		cfg := map[string]string{tc.name: "v"}
		if err := checkBrokerConfigLevels(cfg, false); (err == nil) != tc.atDefault {
			t.Errorf("%s at the default: %v", tc.name, err)
		}
		if err := checkBrokerConfigLevels(cfg, true); (err == nil) != tc.atBroker {
			t.Errorf("%s on a broker: %v", tc.name, err)
		}
	}
}
