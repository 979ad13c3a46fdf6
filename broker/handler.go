package broker

import (
	"context"
	"fmt"
	"net"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/server"
	"samsa/broker/wire"
)

// handler adapts the Broker to server.Handler: it checks the request
// against the API table and calls the API's handler.
type handler struct{ b *Broker }

var _ server.Handler = handler{}

// Serve implements server.Handler. Unknown API keys and versions outside
// the table close the connection, as Kafka does, except ApiVersions, which
// is answered (KIP-511).
func (h handler) Serve(ctx context.Context, c *server.Conn, req *wire.Request) (kmsg.Response, error) {
	b := h.b
	row, ok := b.apis[req.Key]
	if !ok {
		return nil, fmt.Errorf("broker: unsupported api key %d (%s)", req.Key, req.APIName())
	}
	if req.Body == nil {
		return nil, fmt.Errorf("broker: %s v%d: no decoded body", req.APIName(), req.Version)
	}
	if (req.Version < row.min || req.Version > max(row.max, row.brokerMax)) && req.Key != 18 {
		return nil, fmt.Errorf("broker: unsupported version %d of %s (supported %d-%d)",
			req.Version, req.APIName(), row.min, row.max)
	}
	if b.opts.Intercept != nil {
		if resp, err, handled := b.opts.Intercept(req.Key, req.Body); handled {
			return resp, err
		}
	}
	r := &request{ctx: ctx, hdr: &req.Header, body: req.Body, listener: c.ListenerName(),
		principal: c.Principal(), clientHost: clientHost(c)}
	b.debugRequest(r)
	var resp kmsg.Response
	var err error
	if b.quotas.AnyEnabled() {
		resp, err = b.serveWithQuota(c, req, row, r) // client quotas (quota_serve.go)
	} else {
		resp, err = b.serveRow(row, r)
	}
	c.Parked(r.parked) // left out of RequestHandlerAvgIdlePercent (server/plane_metrics.go)
	return resp, err
}

// serveRow answers an inter-broker request without ClusterAction with its
// refusal (authz_interbroker.go), any other request with its handler.
func (b *Broker) serveRow(row api, r *request) (kmsg.Response, error) {
	if row.interBroker {
		if resp, err := b.interBrokerDenied(r); resp != nil || err != nil {
			r.denied = true
			return resp, err
		}
	}
	return row.handle(b, r)
}

// debugRequest logs one line per request at DEBUG (STYLE S10.3).
func (b *Broker) debugRequest(r *request) {
	switch l := b.opts.Logger.(type) {
	case *logrus.Logger:
		if !l.IsLevelEnabled(logrus.DebugLevel) {
			return
		}
	case *logrus.Entry: // a logger with fields (brokertest's): no fields built for nothing
		if !l.Logger.IsLevelEnabled(logrus.DebugLevel) {
			return
		}
	}
	b.log.WithFields(logrus.Fields{"api": r.hdr.APIName(), "api_version": r.hdr.Version,
		"corr": r.hdr.Correlation, "client_id": r.hdr.ClientIDString()}).Debug("request")
}

// clientHost formats the peer's IP as Kafka does (InetAddress.toString).
func clientHost(c *server.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return "/" + a.IP.String()
	}
	return "/" + c.RemoteAddr().String()
}
