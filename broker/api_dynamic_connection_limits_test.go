package broker_test

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
	"samsa/zkutil"
)

// logLines is a logrus hook passing on the messages of the entries that
// contain substr.
type logLines struct {
	substr string
	ch     chan string
}

func (h *logLines) Levels() []logrus.Level { return logrus.AllLevels }
func (h *logLines) Fire(e *logrus.Entry) error {
	if strings.Contains(e.Message, h.substr) {
		select {
		case h.ch <- e.Message:
		default:
		}
	}
	return nil
}

// wait waits for a message that starts with prefix.
func (h *logLines) wait(t *testing.T, prefix, after string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-h.ch:
			if strings.HasPrefix(m, prefix) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q log line after %s", prefix, after)
		}
	}
}

// limitConn is a connection to addr from the loopback address from.
type limitConn struct {
	t *testing.T
	c net.Conn
}

func dialFrom(t *testing.T, from, addr string) *limitConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &limitConn{t: t, c: c}
}

// ask sends an ApiVersions request and reports whether it is answered
// within d (an error or EOF: not answered).
func (l *limitConn) ask(d time.Duration) bool {
	return l.send(d) == nil && l.answer(d)
}

// send writes an ApiVersions request, with d as the deadline.
func (l *limitConn) send(d time.Duration) error {
	id := "limits"
	l.c.SetDeadline(time.Now().Add(d))
	_, err := l.c.Write(wire.AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 1, &id))
	return err
}

// closedOnAsk sends an ApiVersions request and reports whether the broker
// closes the connection (rather than answer or leave it waiting) within
// 20 s.
func (l *limitConn) closedOnAsk() bool {
	if l.send(20*time.Second) != nil {
		return true
	}
	_, err := wire.ReadFrame(l.c, 1<<20, nil)
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// answer waits up to d for the answer of the request ask sent.
func (l *limitConn) answer(d time.Duration) bool {
	l.c.SetReadDeadline(time.Now().Add(d))
	_, err := wire.ReadFrame(l.c, 1<<20, nil)
	return err == nil
}

// alterBroker sends one IncrementalAlterConfigs SET of a broker resource
// and returns its error code and message.
func alterBroker(t *testing.T, rc *brokertest.RawConn, name string, set map[string]string) (int16, string) {
	t.Helper()
	return alterBrokerValidate(t, rc, name, set, false)
}

func alterBrokerValidate(t *testing.T, rc *brokertest.RawConn, name string, set map[string]string, validateOnly bool) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, name
	for k, v := range set {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = k, kmsg.StringPtr(v), kmsg.IncrementalAlterConfigOpSet
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	msg := ""
	if r.ErrorMessage != nil {
		msg = *r.ErrorMessage
	}
	return r.ErrorCode, msg
}

// TestAPIDynamicConnectionLimits: the connection limits change on a
// running broker as in Kafka 2.8: invalid values are refused with
// INVALID_REQUEST; listener.name.<l>.max.connections set at the cluster
// default through IncrementalAlterConfigs holds new connections of that
// listener (they wait unanswered), a per-broker AlterConfigs raising it
// lets the waiting one through, and max.connections.per.ip with an
// override written straight to ZooKeeper (as kafka-configs.sh --zookeeper
// does, with its /config/changes notification) closes new connections
// from the limited address while open ones stay and the overridden
// address gets its own count.
func TestAPIDynamicConnectionLimits(t *testing.T) {
	applied := &logLines{substr: "connection limits updated", ch: make(chan string, 16)}
	c := brokertest.NewCluster(t, 1, withClientListener(
		brokertest.WithLogHook(applied))...)
	client := c.Broker(0).Addr("CLIENT").String()
	admin := brokertest.DialRaw(t, c.Addr(0))

	for key, bad := range map[string]string{
		"max.connections.per.ip.overrides":     "127.0.0.2",
		"max.connections.per.ip":               "-1",
		"listener.name.client.max.connections": "many",
	} {
		code, msg := alterBroker(t, admin, "", map[string]string{key: bad})
		if code != kerr.InvalidRequest.Code || !strings.Contains(msg, "Invalid config value for resource ConfigResource(type=BROKER, name='')") {
			t.Errorf("%s=%s: error %d %q, want INVALID_REQUEST", key, bad, code, msg)
		}
	}

	if code, msg := alterBroker(t, admin, "", map[string]string{"listener.name.client.max.connections": "2"}); code != 0 {
		t.Fatalf("setting listener.name.client.max.connections: %d %s", code, msg)
	}
	applied.wait(t, "listener connection limits", "listener.name.client.max.connections=2")
	c1, c2 := dialFrom(t, "127.0.0.2", client), dialFrom(t, "127.0.0.2", client)
	if !c1.ask(20*time.Second) || !c2.ask(20*time.Second) {
		t.Fatal("connections under listener.name.client.max.connections=2 were not served")
	}
	c3 := dialFrom(t, "127.0.0.2", client)
	if c3.ask(500 * time.Millisecond) {
		t.Fatal("a third connection was served at listener.name.client.max.connections=2")
	}

	// AlterConfigs on this broker's entity: the per-broker value wins.
	alter := kmsg.NewPtrAlterConfigsRequest()
	res := kmsg.NewAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(c.Broker(0).ID()))
	cfg := kmsg.NewAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "listener.name.client.max.connections", kmsg.StringPtr("3")
	res.Configs = append(res.Configs, cfg)
	alter.Resources = append(alter.Resources, res)
	resp, err := admin.RoundTrip(alter)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.(*kmsg.AlterConfigsResponse).Resources[0]; r.ErrorCode != 0 {
		t.Fatalf("AlterConfigs: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	applied.wait(t, "listener connection limits", "raising listener.name.client.max.connections to 3")
	if !c3.answer(20 * time.Second) {
		t.Fatal("the waiting connection was not served after the limit was raised to 3")
	}

	// Through ZooKeeper: at most one connection per address, but three
	// from 127.0.0.3.
	if err := c.ZooKeeper(t).SetEntityConfig(zkutil.ConfigTypeBroker, "<default>", map[string]string{
		"listener.name.client.max.connections": "2",
		"max.connections.per.ip":               "1",
		"max.connections.per.ip.overrides":     "127.0.0.3:3",
	}); err != nil {
		t.Fatal(err)
	}
	applied.wait(t, "connection limits", "max.connections.per.ip=1 written to ZooKeeper")
	c3.c.Close()
	for _, lc := range []*limitConn{c1, c2} {
		if !lc.ask(20 * time.Second) {
			t.Fatal("an open connection stopped being served after max.connections.per.ip was lowered")
		}
	}
	if !dialFrom(t, "127.0.0.2", client).closedOnAsk() {
		t.Fatal("a new connection from 127.0.0.2 was not closed at max.connections.per.ip=1")
	}
	if !dialFrom(t, "127.0.0.3", client).ask(20 * time.Second) {
		t.Fatal("a connection from 127.0.0.3 (override 3) was not served")
	}
}

// TestAPIDynamicConnectionLimitsValidation: a change is validated with the
// other entity's dynamic configs, as Kafka's DynamicBrokerConfig.validate
// does: max.connections.per.ip=0 at the cluster default is refused while
// no max.connections.per.ip.overrides is set anywhere, and accepted once
// this broker's entity has overrides.
func TestAPIDynamicConnectionLimitsValidation(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	admin := brokertest.DialRaw(t, c.Addr(0))
	zero := map[string]string{"max.connections.per.ip": "0"}
	if code, msg := alterBrokerValidate(t, admin, "", zero, true); code != kerr.InvalidRequest.Code ||
		!strings.Contains(msg, "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set") {
		t.Fatalf("max.connections.per.ip=0 without overrides: %d %q", code, msg)
	}
	id := strconv.Itoa(int(c.Broker(0).ID()))
	if code, msg := alterBroker(t, admin, id, map[string]string{"max.connections.per.ip.overrides": "127.0.0.9:5"}); code != 0 {
		t.Fatalf("per-broker overrides: %d %s", code, msg)
	}
	if code, msg := alterBrokerValidate(t, admin, "", zero, true); code != 0 {
		t.Fatalf("max.connections.per.ip=0 at the default with per-broker overrides: %d %s", code, msg)
	}
}

// TestAPIMaxConnectionsSingleListener: a broker's only listener is also
// its inter-broker one, and is held by max.connections as in Kafka
// (protectedListener needs another listener): at the limit a new client
// waits, unanswered, until a connection closes.
func TestAPIMaxConnectionsSingleListener(t *testing.T) {
	applied := &logLines{substr: "connection limits updated", ch: make(chan string, 16)}
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"),
		brokertest.WithLogHook(applied))
	admin := brokertest.DialRaw(t, c.Addr(0))
	if _, err := admin.RoundTrip(kmsg.NewPtrApiVersionsRequest()); err != nil {
		t.Fatal(err)
	}
	// The admin connection and the controller's own.
	open := brokertest.WaitMetric(t, c, 0, "kafka_server_socket_server_metrics_connection_count", func(v float64) bool { return v >= 2 })
	limit := strconv.Itoa(int(open) + 1)
	if code, msg := alterBroker(t, admin, "", map[string]string{"max.connections": limit}); code != 0 {
		t.Fatalf("max.connections=%s: %d %s", limit, code, msg)
	}
	applied.wait(t, "connection limits", "max.connections="+limit)
	c1 := dialFrom(t, "127.0.0.1", c.Addr(0))
	if !c1.ask(20 * time.Second) {
		t.Fatal("a connection under max.connections was not served")
	}
	c2 := dialFrom(t, "127.0.0.1", c.Addr(0))
	if c2.ask(500 * time.Millisecond) {
		t.Fatalf("a connection above max.connections=%s was served on the only listener", limit)
	}
	c1.c.Close()
	if !c2.answer(20 * time.Second) {
		t.Fatal("the waiting connection was not served after one closed")
	}
}

// TestAPIDynamicConnectionLimitsAtStart: the connection limits stored in
// /config/brokers before the broker starts (with no /config/changes
// notification left to replay) are in force from the start (Kafka reads
// the dynamic configs before its SocketServer starts).
func TestAPIDynamicConnectionLimitsAtStart(t *testing.T) {
	c := brokertest.NewCluster(t, 1, withClientListener(
		brokertest.WithZooKeeperSetup(func(zk *zkutil.Client) {
			if err := zk.SetEntityConfig(zkutil.ConfigTypeBroker, "<default>", map[string]string{
				"listener.name.client.max.connections": "1",
				"max.connections.per.ip":               "1",
				"max.connections.per.ip.overrides":     "127.0.0.1:100",
			}); err != nil {
				t.Error(err)
			}
			// No notification: only the start reads the entity.
			changes, err := zk.GetConfigChanges()
			for _, n := range changes {
				if err == nil {
					err = zk.DeleteConfigChange(n)
				}
			}
			if err != nil {
				t.Error(err)
			}
		}))...)
	client := c.Broker(0).Addr("CLIENT").String()
	first := dialFrom(t, "127.0.0.1", client)
	if !first.ask(20 * time.Second) {
		t.Fatal("the first CLIENT connection was not served")
	}
	if dialFrom(t, "127.0.0.1", client).ask(500 * time.Millisecond) {
		t.Fatal("a second CLIENT connection was served with listener.name.client.max.connections=1 stored before start")
	}
	if !dialFrom(t, "127.0.0.2", c.Addr(0)).ask(20 * time.Second) {
		t.Fatal("the first connection from 127.0.0.2 was not served")
	}
	if !dialFrom(t, "127.0.0.2", c.Addr(0)).closedOnAsk() {
		t.Fatal("a second connection from 127.0.0.2 was not closed with max.connections.per.ip=1 stored before start")
	}
}

// withClientListener adds a CLIENT listener beside the inter-broker
// PLAINTEXT one, so the broker-wide limits hold CLIENT only.
func withClientListener(opts ...brokertest.Option) []brokertest.Option {
	return append([]brokertest.Option{
		brokertest.WithProperty("listeners", "PLAINTEXT://127.0.0.1:0,CLIENT://127.0.0.1:0"),
		brokertest.WithProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT"),
		brokertest.WithProperty("inter.broker.listener.name", "PLAINTEXT"),
	}, opts...)
}
