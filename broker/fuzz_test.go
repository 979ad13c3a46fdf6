package broker_test

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
)

// FuzzAPIRequest sends arbitrary request frames to a live broker.
// Invariants: the broker never panics (brokertest fails the run if a
// handler panicked), answers or closes the connection, and keeps serving
// new connections. Seeds: a default-valued request of every API key kmsg
// knows, at its lowest and highest version.
func FuzzAPIRequest(f *testing.F) {
	id := "fuzz"
	for key := int16(0); key < 100; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		for _, v := range []int16{0, req.MaxVersion()} {
			req.SetVersion(v)
			frame := wire.AppendRequest(nil, req, 7, &id)
			f.Add(frame[4:])
		}
	}
	c := brokertest.NewCluster(f, 1)
	c.CreateTopic(f, "fz", 1, 1)
	addr := c.Addr(0)
	f.Fuzz(func(t *testing.T, payload []byte) {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("broker stopped accepting: %v", err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
		if _, err := conn.Write(append(frame, payload...)); err != nil {
			return // closed on us: fine
		}
		// Either an answer (any) or a closed connection; a hang past the
		// deadline is also acceptable for requests that park (acks=all,
		// long-poll fetch) as long as the broker still serves others.
		_, _ = wire.ReadFrame(conn, 64<<20, nil)
	})
}
