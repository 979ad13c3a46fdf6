package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
)

// flakyDialer fails the first failDials dials and the first failRequests requests, then
// answers; it counts what reached it, and tracks open clients.
type flakyDialer struct {
	failDials, failRequests atomic.Int32
	dials, delivered        atomic.Int32
	open                    atomic.Int32
	mu                      sync.Mutex
	order                   []int32 // controller epochs of delivered requests, in order
}

func (d *flakyDialer) Dial(context.Context, string) (RequestClient, error) {
	d.dials.Add(1)
	if d.failDials.Add(-1) >= 0 {
		return nil, errors.New("connection refused")
	}
	d.open.Add(1)
	return &flakyClient{d: d}, nil
}

type flakyClient struct {
	d      *flakyDialer
	closed atomic.Bool
}

func (c *flakyClient) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	if c.d.failRequests.Add(-1) >= 0 {
		return nil, io.ErrUnexpectedEOF
	}
	c.d.delivered.Add(1)
	c.d.mu.Lock()
	c.d.order = append(c.d.order, req.(*kmsg.UpdateMetadataRequest).ControllerEpoch)
	c.d.mu.Unlock()
	return req.ResponseKind(), nil
}

func (c *flakyClient) Close() error {
	if !c.closed.Swap(true) {
		c.d.open.Add(-1)
	}
	return nil
}

func testChannelManager(d Dialer) *ChannelManager {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return newChannelManager(d, "", time.Second, time.Millisecond, l)
}

func umOutbound(epoch int32, done func(error)) outbound {
	return outbound{
		key:        6,
		maxVersion: DefaultUpdateMetadataVersion,
		build: func(v int16) kmsg.Request {
			return buildUpdateMetadata(v, requestHeader{controllerID: 1, controllerEpoch: epoch}, nil, nil)
		},
		onResponse: func(_ kmsg.Response, err error) { done(err) },
	}
}

var testBroker = LiveBroker{ID: 2, Epoch: 5, Endpoints: []Endpoint{{"PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092}}}

// TestControllerChannelRetriesInOrder: failed dials and failed sends are retried ("the
// controller will retry the request") and requests to one broker arrive in order.
func TestControllerChannelRetriesInOrder(t *testing.T) {
	d := &flakyDialer{}
	d.failDials.Store(3)
	d.failRequests.Store(2)
	m := testChannelManager(d)
	defer m.Shutdown()
	m.AddBroker(testBroker)
	var wg sync.WaitGroup
	for e := int32(1); e <= 5; e++ {
		wg.Add(1)
		m.send(2, umOutbound(e, func(err error) {
			if err != nil {
				t.Errorf("epoch %d: %v", e, err)
			}
			wg.Done()
		}))
	}
	wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	if fmt.Sprint(d.order) != "[1 2 3 4 5]" {
		t.Fatalf("delivered in order %v", d.order)
	}
	if d.dials.Load() < 4 {
		t.Fatalf("%d dials", d.dials.Load())
	}
}

// TestControllerChannelRemoveAndShutdown: removing a broker stops its sender and closes its
// connection; requests to unknown brokers are dropped; Shutdown waits for every sender.
func TestControllerChannelRemoveAndShutdown(t *testing.T) {
	d := &flakyDialer{}
	m := testChannelManager(d)
	m.AddBroker(testBroker)
	m.AddBroker(testBroker) // no second sender
	done := make(chan error, 1)
	m.send(2, umOutbound(1, func(err error) { done <- err }))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	m.RemoveBroker(2)
	testwait.For(t, 5*time.Second, func() error {
		if n := d.open.Load(); n != 0 {
			return fmt.Errorf("%d open clients", n)
		}
		return nil
	})
	if m.hasBroker(2) {
		t.Fatal("sender still registered")
	}
	m.send(2, umOutbound(2, func(error) { t.Error("request to a removed broker was answered") }))

	// A sender stuck retrying a broker that never answers still stops on Shutdown.
	d.failDials.Store(1 << 30)
	m.AddBroker(LiveBroker{ID: 3, Endpoints: testBroker.Endpoints})
	m.send(3, umOutbound(3, func(error) {}))
	testwait.For(t, 5*time.Second, func() error {
		if d.dials.Load() < 3 {
			return fmt.Errorf("%d dials", d.dials.Load())
		}
		return nil
	})
	m.Shutdown()
	m.AddBroker(testBroker) // ignored after Shutdown
	if m.hasBroker(2) {
		t.Fatal("AddBroker after Shutdown started a sender")
	}
}

// TestControllerChannelNoEndpoint: a broker without the inter-broker listener gets no
// connection attempts; its requests fail at once.
func TestControllerChannelNoEndpoint(t *testing.T) {
	d := &flakyDialer{}
	l := logrus.New()
	l.SetOutput(io.Discard)
	m := newChannelManager(d, "INTERNAL", time.Second, time.Millisecond, l)
	defer m.Shutdown()
	m.AddBroker(testBroker)
	done := make(chan error, 1)
	m.send(2, umOutbound(1, func(err error) { done <- err }))
	if err := <-done; !errors.Is(err, errNoEndpoint) {
		t.Fatalf("err %v", err)
	}
	if d.dials.Load() != 0 {
		t.Fatalf("%d dials", d.dials.Load())
	}
}
