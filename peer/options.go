package peer

import (
	"context"
	"io"
	"net"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/sasl"
)

// Defaults, after Kafka's client settings.
const (
	// DefaultMaxResponseSize bounds a response frame. Fetch responses are bounded by
	// replica.fetch.response.max.bytes (10 MiB by default) but a partition may return one batch
	// above it; 256 MiB leaves room without letting a bad size prefix allocate without bound.
	DefaultMaxResponseSize int32 = 256 << 20
	// DefaultReconnectBackoff and DefaultReconnectBackoffMax are reconnect.backoff.ms and
	// reconnect.backoff.max.ms.
	DefaultReconnectBackoff    = 50 * time.Millisecond
	DefaultReconnectBackoffMax = time.Second
	// DefaultDialTimeout bounds a connection attempt when ctx has no earlier deadline.
	DefaultDialTimeout = 10 * time.Second
)

// Option configures a Client or a Pool.
type Option func(*options)

type options struct {
	log                 logrus.FieldLogger
	maxResponseSize     int32
	backoff, backoffMax time.Duration
	dialTimeout         time.Duration
	requestTimeout      time.Duration // 0: none
	maxVersions         map[int16]int16
	dial                func(ctx context.Context, network, addr string) (net.Conn, error)
	sasl                sasl.Mechanism // nil: no SASL (WithSASL)
}

func buildOptions(opts []Option) options {
	l := logrus.New()
	l.SetOutput(io.Discard)
	o := options{
		log:             l,
		maxResponseSize: DefaultMaxResponseSize,
		backoff:         DefaultReconnectBackoff,
		backoffMax:      DefaultReconnectBackoffMax,
		dialTimeout:     DefaultDialTimeout,
		dial:            (&net.Dialer{}).DialContext,
	}
	for _, opt := range opts {
		opt(&o)
	}
	o.log = o.log.WithField("component", "peer")
	return o
}

// WithLogger sets the logger (component=peer is added). Default: discard.
func WithLogger(l logrus.FieldLogger) Option { return func(o *options) { o.log = l } }

// WithMaxResponseSize bounds response frames (default DefaultMaxResponseSize).
func WithMaxResponseSize(n int32) Option {
	return func(o *options) {
		if n > 0 {
			o.maxResponseSize = n
		}
	}
}

// WithReconnectBackoff sets the reconnect backoff, which doubles per failed attempt from min to
// max (defaults 50 ms and 1 s).
func WithReconnectBackoff(minBackoff, maxBackoff time.Duration) Option {
	return func(o *options) {
		if minBackoff > 0 {
			o.backoff = minBackoff
		}
		if maxBackoff >= o.backoff {
			o.backoffMax = maxBackoff
		}
	}
}

// WithDialTimeout bounds each connection attempt (default DefaultDialTimeout).
func WithDialTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.dialTimeout = d
		}
	}
}

// WithRequestTimeout bounds each call's I/O by d, in addition to its ctx's deadline (Kafka's
// request.timeout.ms; replica fetchers use replica.socket.timeout.ms), without deriving a ctx
// per call. A call that runs out of it returns an error wrapping os.ErrDeadlineExceeded and
// drops the connection. d <= 0 (the default) sets no bound.
func WithRequestTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.requestTimeout = d
		}
	}
}

// WithMaxVersions caps the version Request picks per api key, for example to the versions of
// inter.broker.protocol.version. The map is copied.
func WithMaxVersions(m map[int16]int16) Option {
	return func(o *options) {
		o.maxVersions = make(map[int16]int16, len(m))
		for k, v := range m {
			o.maxVersions[k] = v
		}
	}
}

// WithDialer replaces the dial function (tests use it to route through a fault proxy).
func WithDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(o *options) {
		if dial != nil {
			o.dial = dial
		}
	}
}
