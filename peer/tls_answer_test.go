package peer_test

import (
	"errors"
	"net"
	"runtime"
	"testing"

	"samsa/broker/wire"
	"samsa/peer"
)

// TestPeerTLSAnswerNotAllocated is KIP-498's client side (KAFKA-4090): a
// plaintext client dialled at a TLS port reads the TLS record the server
// answers with as a 4-byte frame size — an alert 15 03 03 00 02 is
// 352,518,912 bytes, a handshake record 16 03 03 … 369,295,616 — and Java
// clients allocated it. Samsa's inter-broker client with its default bound
// refuses both sizes (ErrFrameTooLarge) without allocating anything near
// them.
func TestPeerTLSAnswerNotAllocated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record []byte
	}{
		{"alert", []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46}},
		{"handshake", []byte{0x16, 0x03, 0x03, 0x00, 0x5a, 0x02, 0x00, 0x00, 0x56}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				// The client's first request, then the TLS server's answer.
				if _, err := wire.ReadFrame(conn, 0, nil); err != nil {
					return
				}
				conn.Write(tc.record)
				wire.ReadFrame(conn, 0, nil) // until the client drops us
			}()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = peer.Dial(ctxT(t), ln.Addr().String(), "c")
			runtime.ReadMemStats(&after)
			if !errors.Is(err, wire.ErrFrameTooLarge) {
				t.Fatalf("err = %v, want %v", err, wire.ErrFrameTooLarge)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
				t.Fatalf("allocated %d bytes reading a TLS record as a frame", d)
			}
		})
	}
}
