package configs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	kscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"samsa/broker/brokertest"
	"samsa/broker/security/scram"
	"samsa/zkutil"
)

// scramLogin tries one SCRAM login on addr and returns its error.
func scramLogin(addr string, m sasl.Mechanism) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(m), kgo.RequestRetries(0))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.Ping(ctx)
}

// TestToolConfigsSCRAM: kafka-configs stores SCRAM credentials with
// --zookeeper (Kafka's znode format) and with --bootstrap-server
// (AlterUserScramCredentials), describes and deletes them, and a running
// broker lets the users log in (and out) without a restart.
func TestToolConfigsSCRAM(t *testing.T) {
	c := brokertest.NewCluster(t, 1,
		brokertest.WithProperty("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"),
		brokertest.WithProperty("sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512"))
	saslAddr := c.Broker(0).Addr("SASL_PLAINTEXT").String()
	bootstrap := c.Addrs()[0]

	out, _, code := runTool(t, "", "kafka-configs", "--zookeeper", c.ZKConnect(), "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]")
	if code != 0 || !strings.Contains(out, "Completed updating config for entity: user-principal 'alice'.") {
		t.Fatalf("--zookeeper alter: %d %q", code, out)
	}
	cfg, err := c.ZooKeeper(t).GetEntityConfig(zkutil.ConfigTypeUser, "alice")
	if err != nil {
		t.Fatal(err)
	}
	cred, err := scram.ParseCredential(cfg["SCRAM-SHA-256"])
	if err != nil || cred.Iterations != 8192 || len(cred.StoredKey) != 32 {
		t.Fatalf("stored SCRAM-SHA-256 %q: %v", cfg["SCRAM-SHA-256"], err)
	}
	alice := kscram.Auth{User: "alice", Pass: "alice-secret"}
	brokertest.WaitFor(t, 30*time.Second, func() error { return scramLogin(saslAddr, alice.AsSha256Mechanism()) })
	if err := scramLogin(saslAddr, kscram.Auth{User: "alice", Pass: "wrong"}.AsSha512Mechanism()); err == nil {
		t.Fatal("a wrong password logged in")
	}

	out, errOut, code := runTool(t, "", "kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "users", "--entity-name", "bob",
		"--add-config", "SCRAM-SHA-512=[iterations=4096,password=bob-secret]")
	if code != 0 {
		t.Fatalf("--bootstrap-server alter: %d %q %q", code, out, errOut)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		return scramLogin(saslAddr, kscram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism())
	})
	out, _, code = runTool(t, "", "kafka-configs", "--bootstrap-server", bootstrap, "--describe", "--entity-type", "users", "--entity-name", "alice")
	if want := "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096"; code != 0 || !strings.Contains(out, want) {
		t.Fatalf("describe: %d %q, want %q", code, out, want)
	}
	if _, _, code := runTool(t, "", "kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--delete-config", "SCRAM-SHA-512"); code != 0 {
		t.Fatal("delete failed")
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if scramLogin(saslAddr, alice.AsSha512Mechanism()) == nil {
			return fmt.Errorf("alice still logs in with SCRAM-SHA-512 after its deletion")
		}
		return nil
	})
	if err := scramLogin(saslAddr, alice.AsSha256Mechanism()); err != nil {
		t.Fatalf("SCRAM-SHA-256 gone too: %v", err)
	}
	for _, conn := range [][]string{{"--zookeeper", c.ZKConnect()}, {"--bootstrap-server", bootstrap}} {
		_, errOut, code := runTool(t, "", append(append([]string{"kafka-configs"}, conn...), "--alter", "--entity-type", "users", "--entity-name", "carol",
			"--add-config", "SCRAM-SHA-256=[iterations=1000,password=x]")...)
		if code == 0 || !strings.Contains(errOut, "less than the minimum 4096") {
			t.Fatalf("%s: iterations 1000: exit %d %q", conn[0], code, errOut)
		}
	}
	// A deletion of a credential that does not exist: RESOURCE_NOT_FOUND from the broker.
	_, errOut, code = runTool(t, "", "kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "users", "--entity-name", "bob",
		"--delete-config", "SCRAM-SHA-256")
	if code == 0 || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("deleting a missing credential: exit %d %q", code, errOut)
	}
}
