package broker

import (
	"context"
	"io"
	"net"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/zkutil"
)

// Options are the process-level dependencies of a Broker (STYLE S1.5).
type Options struct {
	// Logger receives every log line of the broker and its parts. Default:
	// discard.
	Logger logrus.FieldLogger
	// Registry receives the broker's metrics. Default: a private registry.
	Registry metrics.Registry
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Intercept, when set, sees every request before its handler (fault
	// injection for brokertest, STYLE S11.4): handled=true answers with
	// resp (nil: no answer) or closes the connection with err. nil in
	// production.
	Intercept func(key int16, req kmsg.Request) (resp kmsg.Response, err error, handled bool)
	// Dial, when set, opens every inter-broker connection (controller
	// requests, replica fetches, controlled shutdown); brokertest uses it
	// to partition brokers from each other. nil: a plain net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnFatal, when set, is called once (on a goroutine of its own) when
	// the broker can no longer serve: every log dir has failed (Kafka
	// halts the process then), or a failed dir's log dir event
	// notification could not be written to ZooKeeper. The owner should Shutdown the broker and
	// end the process with a failure status. nil: the broker shuts itself
	// down.
	OnFatal func(err error)
	// ZooKeeperAuth is the broker's ZooKeeper identity, added to its session
	// (digest "user:password"); zookeeper.set.acl=true needs one, as Kafka
	// refuses secure ACLs without an authenticated ZooKeeper client. nil:
	// the JAAS file's Client section (zookeeper_tls.go), else unauthenticated.
	ZooKeeperAuth []zkutil.Credential
	// FetchSessionSweepEvery is the fetch session cache's sweep interval
	// (fetchsession.Config.SweepEvery): 0 is the default (5 s), negative
	// never sweeps, so that a test can tell a missing change notice by the
	// stall it causes.
	FetchSessionSweepEvery time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		o.Logger = l
	}
	if o.Registry == nil {
		o.Registry = metrics.NewRegistry()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
