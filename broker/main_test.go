package broker_test

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
	"samsa/kafka"
)

func TestMain(m *testing.M) { brokertest.Main(m) }

// rawConn is a bare Kafka connection for protocol-level tests.
type rawConn struct {
	t    testing.TB
	c    net.Conn
	corr int32
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c}
}

// roundTrip sends req at its version and decodes the answer.
func (r *rawConn) roundTrip(req kmsg.Request) (kmsg.Response, error) {
	r.t.Helper()
	r.corr++
	id := "raw"
	if err := r.c.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		return nil, err
	}
	if _, err := r.c.Write(wire.AppendRequest(nil, req, r.corr, &id)); err != nil {
		return nil, err
	}
	frame, err := wire.ReadFrame(r.c, 64<<20, nil)
	if err != nil {
		return nil, err
	}
	return wire.ParseResponse(frame, req, r.corr)
}

// send writes raw bytes.
func (r *rawConn) send(b []byte) error {
	_, err := r.c.Write(b)
	return err
}

// closed reports whether the broker closed the connection (read EOF) within
// a few seconds.
func (r *rawConn) closed() bool {
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	_, err := r.c.Read(b[:])
	return err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func replicaTP(topic string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: p}
}
