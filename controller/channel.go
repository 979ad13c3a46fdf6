package controller

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestClient is a connection to one broker's inter-broker listener. peer's client
// satisfies it (see channel_peer.go). Request may block until ctx ends.
type RequestClient interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	Close() error
}

// Dialer opens RequestClients; addr is "host:port".
type Dialer interface {
	Dial(ctx context.Context, addr string) (RequestClient, error)
}

// VersionLimiter is optionally implemented by a RequestClient that negotiates API versions
// with the broker (ApiVersions): MaxVersion returns the broker's highest version of key. An
// error wrapping errVersionUnsupported drops the request; any other error counts as a failed
// send (reconnect and retry).
type VersionLimiter interface {
	MaxVersion(ctx context.Context, key int16) (int16, error)
}

// errVersionUnsupported: the broker does not support the API at any version we can send.
var errVersionUnsupported = errors.New("controller: broker does not support the request version")

// Default request versions: the highest each API has in Kafka 2.8 (IBP 2.8-IV1).
const (
	DefaultLeaderAndIsrVersion   int16 = 5
	DefaultUpdateMetadataVersion int16 = 7
	DefaultStopReplicaVersion    int16 = 3
)

// outbound is one request for one broker; build is called on the sender goroutine with the
// version to use, and onResponse runs there too (it must not touch controller state).
type outbound struct {
	key        int16
	maxVersion int16
	build      func(version int16) kmsg.Request
	onResponse func(resp kmsg.Response, err error)
}

// ChannelManager sends controller requests to brokers: one sender goroutine with its own
// queue per live broker (Kafka's ControllerChannelManager and RequestSendThread, STYLE S6.5).
// Requests to one broker leave in order; a failed send reconnects after a backoff and sends
// the same request again until it succeeds or the broker is removed.
//
// All methods are safe for concurrent use.
type ChannelManager struct {
	dialer         Dialer
	listener       string
	requestTimeout time.Duration
	backoff        time.Duration
	log            logrus.FieldLogger

	wg sync.WaitGroup
	mu struct {
		sync.Mutex
		senders map[int32]*brokerSender // guarded by mu
		closed  bool                    // guarded by mu
	}
}

// newChannelManager returns an empty ChannelManager.
func newChannelManager(d Dialer, listener string, requestTimeout, backoff time.Duration, log logrus.FieldLogger) *ChannelManager {
	m := &ChannelManager{dialer: d, listener: listener, requestTimeout: requestTimeout, backoff: backoff, log: log}
	m.mu.senders = make(map[int32]*brokerSender)
	return m
}

// brokerSender is the queue and goroutine for one broker.
type brokerSender struct {
	id     int32
	addr   string
	cancel context.CancelFunc
	signal chan struct{} // capacity 1
	mu     struct {
		sync.Mutex
		queue []outbound // guarded by mu
	}
}

// AddBroker starts a sender for b (a no-op when one exists). It connects lazily to b's
// endpoint for the configured inter-broker listener.
func (m *ChannelManager) AddBroker(b LiveBroker) {
	ep, ok := b.endpoint(m.listener)
	if !ok {
		m.log.WithFields(logrus.Fields{"broker": b.ID, "listener": m.listener}).
			Error("controller: broker has no endpoint for the inter-broker listener; requests to it are dropped")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return
	}
	if _, exists := m.mu.senders[b.ID]; exists {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &brokerSender{id: b.ID, cancel: cancel, signal: make(chan struct{}, 1)}
	if ok {
		s.addr = net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
	}
	m.mu.senders[b.ID] = s
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.runSender(ctx, s)
	}()
}

// RemoveBroker stops the broker's sender and drops its queued requests.
func (m *ChannelManager) RemoveBroker(id int32) {
	m.mu.Lock()
	s := m.mu.senders[id]
	delete(m.mu.senders, id)
	m.mu.Unlock()
	if s != nil {
		s.cancel()
	}
}

// RemoveAll stops every sender (controller resignation) without waiting for them.
func (m *ChannelManager) RemoveAll() {
	m.mu.Lock()
	senders := m.mu.senders
	m.mu.senders = make(map[int32]*brokerSender)
	m.mu.Unlock()
	for _, s := range senders {
		s.cancel()
	}
}

// Shutdown stops every sender and waits for their goroutines to end.
func (m *ChannelManager) Shutdown() {
	m.mu.Lock()
	m.mu.closed = true
	m.mu.Unlock()
	m.RemoveAll()
	m.wg.Wait()
}

// interBrokerListener returns the listener name requests are sent to ("" = first endpoint).
func (m *ChannelManager) interBrokerListener() string { return m.listener }

// hasBroker reports whether a sender exists for id.
func (m *ChannelManager) hasBroker(id int32) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.mu.senders[id]
	return ok
}

// send queues o for broker id. It never blocks; without a sender for id the request is
// dropped with a log line (Kafka: "Not sending request ... to broker, since it is offline").
func (m *ChannelManager) send(id int32, o outbound) {
	m.mu.Lock()
	s := m.mu.senders[id]
	m.mu.Unlock()
	if s == nil {
		m.log.WithFields(logrus.Fields{"broker": id, "api_key": o.key}).
			Warn("controller: not sending request to broker, since it is offline")
		return
	}
	s.mu.Lock()
	s.mu.queue = append(s.mu.queue, o)
	s.mu.Unlock()
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// next blocks until a request is queued or ctx ends.
func (s *brokerSender) next(ctx context.Context) (outbound, bool) {
	for {
		s.mu.Lock()
		if len(s.mu.queue) > 0 {
			o := s.mu.queue[0]
			s.mu.queue[0] = outbound{}
			s.mu.queue = s.mu.queue[1:]
			s.mu.Unlock()
			return o, true
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return outbound{}, false
		case <-s.signal:
		}
	}
}

// runSender is the sender goroutine of one broker. It owns the connection.
func (m *ChannelManager) runSender(ctx context.Context, s *brokerSender) {
	log := m.log.WithField("broker", s.id)
	var client RequestClient
	defer func() {
		if client != nil {
			_ = client.Close()
		}
	}()
	for {
		o, ok := s.next(ctx)
		if !ok {
			return
		}
		if s.addr == "" {
			o.onResponse(nil, errNoEndpoint)
			continue
		}
		// Retry this request until it is answered or the sender stops (Kafka's
		// RequestSendThread: "the controller will retry the request").
		for attempt := 0; ; attempt++ {
			if attempt > 0 && !sleepCtx(ctx, m.backoff) {
				return
			}
			if client == nil {
				c, err := m.dialer.Dial(ctx, s.addr)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					withAttempt(log, attempt).WithError(err).WithField("peer", s.addr).Log(retryLevel(attempt), "controller: cannot connect to broker; will retry")
					continue
				}
				client = c
			}
			rctx, cancel := context.WithTimeout(ctx, m.requestTimeout)
			resp, err := m.sendOne(rctx, client, o)
			cancel()
			if errors.Is(err, errVersionUnsupported) {
				o.onResponse(nil, err)
				break
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				withAttempt(log, attempt).WithError(err).WithFields(logrus.Fields{"peer": s.addr, "api_key": o.key}).
					Log(retryLevel(attempt), "controller: request to broker failed; reconnecting")
				_ = client.Close()
				client = nil
				continue
			}
			o.onResponse(resp, nil)
			break
		}
	}
}

// sendOne builds o at the highest version both sides support and sends it.
func (m *ChannelManager) sendOne(ctx context.Context, client RequestClient, o outbound) (kmsg.Response, error) {
	version := o.maxVersion
	if vl, ok := client.(VersionLimiter); ok {
		v, err := vl.MaxVersion(ctx, o.key)
		if err != nil {
			return nil, err
		}
		version = min(version, v)
	}
	return client.Request(ctx, o.build(version))
}

// retryLevel logs the first failure of a request at WARN and its retries (every
// RetryBackoff until the broker answers or is removed) at DEBUG.
func retryLevel(attempt int) logrus.Level {
	if attempt == 0 {
		return logrus.WarnLevel
	}
	return logrus.DebugLevel
}

// withAttempt adds the attempt number to retry logs.
func withAttempt(log logrus.FieldLogger, attempt int) *logrus.Entry {
	return log.WithField("attempt", attempt+1)
}

// sleepCtx waits d or until ctx ends; it returns false when ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
