package zkutil

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"
)

// Default timeouts, as Kafka 2.8 (zookeeper.session.timeout.ms=18000;
// zookeeper.connection.timeout.ms defaults to the session timeout).
const (
	DefaultSessionTimeout = 18 * time.Second
)

// Config configures Connect.
type Config struct {
	// Connect is zookeeper.connect: "host1:port1,host2:port2[/chroot]".
	Connect string
	// SessionTimeout is the requested session timeout (default 18 s).
	SessionTimeout time.Duration
	// ConnectionTimeout bounds the wait for the first session, and for each
	// operation retried across connection loss (default SessionTimeout).
	ConnectionTimeout time.Duration
	// Logger receives zkutil's logs (component=zkutil). Nil discards them.
	Logger logrus.FieldLogger
	// TLS, when set, wraps every connection to ZooKeeper in TLS
	// (zookeeper.ssl.client.enable, KIP-515); ServerName is set per server
	// when empty, so the certificate's host name is checked unless the
	// config skips verification.
	TLS *tls.Config
	// SecureACLs is zookeeper.set.acl: znodes this Client creates get
	// Kafka's secure ACLs (znode_acl.go). It needs an authenticated
	// session (Auth, or a TLS client certificate: ZooKeeper's x509
	// identity), else Connect fails with ErrSecureACLsWithoutAuth.
	SecureACLs bool
	// Auth is added to the session before Connect returns (AddAuth), and
	// again by go-zookeeper after each reconnect.
	Auth []Credential
}

// Client is one ZooKeeper session with Kafka's chroot, retry, re-arm and
// re-registration behaviour (Kafka ZooKeeperClient + KafkaZkClient).
//
// All methods are safe for concurrent use. Operations block until ZooKeeper
// answers; on connection loss they are retried until ConnectionTimeout
// passes (then ErrConnectionLoss), as Kafka retries requests until connected.
// A retried non-idempotent write may therefore report ErrNodeExists or
// ErrBadVersion for a write that did happen; the domain operations that care
// (broker registration, controller election, ISR updates) read back and
// accept their own write.
//
// When the session expires go-zookeeper opens a new one on the same Client;
// zkutil then re-arms every persistent watch, runs the OnNewSession hooks
// and calls each watch once. Hooks and watch callbacks run on the Client's
// dispatcher goroutine, one at a time, in ZooKeeper's order (doc.go): they
// must only enqueue work for their owner and return (STYLE S8.2), and must
// never call Close.
type Client struct {
	conn     *zk.Conn
	events   <-chan zk.Event // closed when go-zookeeper's goroutines are done; unread otherwise
	chroot   string          // "" or "/kafka"; immutable after Connect
	servers  []string
	timeout  time.Duration // connection timeout; immutable
	log      logrus.FieldLogger
	sniff    *credSniffer
	dispatch *dispatcher
	quit     chan struct{} // closed by Close
	wg       sync.WaitGroup
	closing  sync.Once

	firstSession chan struct{} // closed when the first session is established
	firstOnce    sync.Once
	sessionID    atomic.Int64 // last session id seen in a HasSession event
	secure       bool         // zookeeper.set.acl; immutable after Connect

	mu struct {
		sync.Mutex
		hooks  []func() // guarded by mu
		closed bool     // guarded by mu; set by Close
	}
}

// ParseConnect splits a zookeeper.connect string into its servers and its
// chroot ("" when none). A chroot of "/" means none.
func ParseConnect(connect string) (servers []string, chroot string, err error) {
	connect = strings.TrimSpace(connect)
	hosts := connect
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		hosts, chroot = connect[:i], connect[i:]
	}
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			servers = append(servers, h)
		}
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("%w: connect string %q has no servers", ErrInvalidPath, connect)
	}
	chroot = strings.TrimRight(chroot, "/")
	if chroot != "" {
		if err := validatePath(chroot); err != nil {
			return nil, "", fmt.Errorf("%w: chroot %q", ErrInvalidPath, chroot)
		}
	}
	return servers, chroot, nil
}

// validatePath checks the ZooKeeper path rules that matter for Samsa: absolute,
// no empty, "." or ".." segments, no trailing slash, no NUL.
func validatePath(p string) error {
	if p == "/" {
		return nil
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) {
		return ErrInvalidPath
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return ErrInvalidPath
		}
	}
	return nil
}

// Connect opens a session. When the connect string has a chroot that does not
// exist yet, Connect first creates it with a temporary session without chroot,
// as Kafka's KafkaServer.initZkClient does. It returns once a session exists,
// or ErrNoServer after ConnectionTimeout (or ctx's end).
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	servers, chroot, err := ParseConnect(cfg.Connect)
	if err != nil {
		return nil, err
	}
	// A TLS client certificate is an identity too (ZooKeeper's x509
	// provider, KIP-515).
	tlsIdentity := cfg.TLS != nil && (len(cfg.TLS.Certificates) > 0 || cfg.TLS.GetClientCertificate != nil)
	if cfg.SecureACLs && len(cfg.Auth) == 0 && !tlsIdentity {
		return nil, ErrSecureACLsWithoutAuth
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.ConnectionTimeout <= 0 {
		cfg.ConnectionTimeout = cfg.SessionTimeout
	}
	log := cfg.Logger
	if log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		log = l
	}
	log = log.WithField("component", "zkutil")
	if chroot != "" {
		if err := ensureChroot(ctx, cfg, servers, chroot, log); err != nil {
			return nil, err
		}
	}
	c, err := open(ctx, cfg, servers, chroot, log)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ensureChroot creates the chroot path with a temporary chroot-less client.
func ensureChroot(ctx context.Context, cfg Config, servers []string, chroot string, log logrus.FieldLogger) error {
	tmp, err := open(ctx, cfg, servers, "", log.WithField("chroot_setup", true))
	if err != nil {
		return err
	}
	defer tmp.Close()
	exists, _, err := tmp.Exists(chroot)
	if err != nil {
		return err
	}
	if exists {
		return nil
	}
	log.WithField("chroot", chroot).Info("creating chroot path in zookeeper")
	if err := tmp.EnsurePath(chroot); err != nil {
		return fmt.Errorf("zkutil: creating chroot %s: %w", chroot, err)
	}
	return nil
}

func open(ctx context.Context, cfg Config, servers []string, chroot string, log logrus.FieldLogger) (*Client, error) {
	c := &Client{
		chroot:       chroot,
		servers:      servers,
		timeout:      cfg.ConnectionTimeout,
		log:          log,
		sniff:        &credSniffer{tls: cfg.TLS},
		dispatch:     newDispatcher(log),
		quit:         make(chan struct{}),
		firstSession: make(chan struct{}),
		secure:       cfg.SecureACLs,
	}
	conn, events, err := zk.Connect(servers, cfg.SessionTimeout,
		zk.WithLogger(zkLogger{log}),
		zk.WithLogInfo(false),
		zk.WithDialer(c.sniff.dial),
		zk.WithHostProvider(&hostProvider{}),
		zk.WithEventCallback(c.onEvent),
	)
	if err != nil {
		return nil, fmt.Errorf("zkutil: connect %v: %w", servers, err)
	}
	c.conn, c.events = conn, events
	c.track(func() { c.dispatch.run(c.quit, c.prepare) })
	timer := time.NewTimer(cfg.ConnectionTimeout)
	defer timer.Stop()
	select {
	case <-c.firstSession:
		log.WithField("session", fmt.Sprintf("0x%x", c.SessionID())).Info("zookeeper session established")
		for _, cred := range cfg.Auth {
			if err = conn.AddAuth(cred.Scheme, cred.Auth); err != nil {
				c.Close()
				return nil, fmt.Errorf("zkutil: authenticating with scheme %q: %w", cred.Scheme, err)
			}
		}
		return c, nil
	case <-timer.C:
		err = fmt.Errorf("%w: %v within %v", ErrNoServer, servers, cfg.ConnectionTimeout)
	case <-ctx.Done():
		err = fmt.Errorf("%w: %v: %v", ErrNoServer, servers, ctx.Err())
	}
	c.Close()
	return nil, err
}

// onEvent is go-zookeeper's event callback. go-zookeeper calls it for every
// event in the order it happened (watch events on its receive goroutine, in
// the server's order; session states on its connection goroutine, between
// connections), sometimes under its watcher lock: it only records state,
// logs and queues on the dispatcher, never waits.
func (c *Client) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		c.dispatch.route(ev)
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		id := c.conn0SessionID()
		prev := c.sessionID.Swap(id)
		c.firstOnce.Do(func() { close(c.firstSession) })
		if prev != 0 && prev != id {
			c.log.WithField("old_session", fmt.Sprintf("0x%x", prev)).WithField("session", fmt.Sprintf("0x%x", id)).
				Warn("new zookeeper session after expiry; re-registering")
			c.dispatch.queueSession(c.runHooks)
		}
	case zk.StateExpired:
		c.log.Warn("zookeeper session expired; opening a new session")
	case zk.StateDisconnected:
		select {
		case <-c.quit:
		default:
			c.log.Warn("disconnected from zookeeper; reconnecting")
		}
	}
}

// conn0SessionID reads the session id from the sniffer, which saw the connect
// response before go-zookeeper announced the session (c.conn may not be set
// yet during the first event).
func (c *Client) conn0SessionID() int64 {
	id, _ := c.sniff.credentials()
	return id
}

// runHooks runs on the dispatcher after a session expiry replaced the
// session: the hooks in registration order, before the persistent watches
// fire (prepare).
func (c *Client) runHooks() {
	c.mu.Lock()
	hooks := append([]func(){}, c.mu.hooks...)
	c.mu.Unlock()
	for _, h := range hooks {
		h()
	}
}

// OnNewSession registers fn to run after every session expiry, once the new
// session exists (ephemeral znodes of the old session are gone: the broker
// re-registers and re-runs controller election). fn runs on the dispatcher
// goroutine and must only enqueue work and return.
func (c *Client) OnNewSession(fn func()) {
	c.mu.Lock()
	c.mu.hooks = append(c.mu.hooks, fn)
	c.mu.Unlock()
}

// SessionID returns the current session id (0 while there is none).
func (c *Client) SessionID() int64 { return c.conn.SessionID() }

// SessionCredentials returns the current session id and password. It exists
// for zktest.ExpireSession; production code has no use for it.
func (c *Client) SessionCredentials() (sessionID int64, password []byte) {
	return c.sniff.credentials()
}

// Servers returns the ZooKeeper servers of the connect string.
func (c *Client) Servers() []string { return append([]string(nil), c.servers...) }

// Chroot returns the chroot of the connect string ("" when none).
func (c *Client) Chroot() string { return c.chroot }

// Close ends the session (its ephemeral znodes go away at once), stops the
// watches and the dispatcher and waits for them, and for go-zookeeper's
// connection goroutines (at most closeWait when ZooKeeper does not answer).
// It is idempotent and must not be called from a watch callback or hook.
func (c *Client) Close() {
	c.closing.Do(func() {
		c.mu.Lock()
		c.mu.closed = true
		c.mu.Unlock()
		close(c.quit)
		if c.conn != nil {
			c.conn.Close()
		}
	})
	c.wg.Wait()
	if c.events == nil {
		return
	}
	t := time.NewTimer(closeWait)
	defer t.Stop()
	for {
		select {
		case _, ok := <-c.events:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

// closeWait bounds how long Close waits for go-zookeeper to wind down.
const closeWait = 2 * time.Second

// abs adds the chroot to a chroot-relative path.
func (c *Client) abs(p string) string {
	if c.chroot == "" {
		return p
	}
	if p == "/" {
		return c.chroot
	}
	return c.chroot + p
}

// rel strips the chroot from a path ZooKeeper returned.
func (c *Client) rel(p string) string {
	if c.chroot == "" {
		return p
	}
	r := strings.TrimPrefix(p, c.chroot)
	if r == "" {
		return "/"
	}
	return r
}

// retry runs fn until it succeeds, fails with a non-transient error, the
// Client closes, or the connection timeout passes after the first failure. It
// returns fn's raw error.
//
// The deadline starts at the first transient failure, not when the operation
// starts: a request can sit for seconds on a connection that then drops (a
// stalled ZooKeeper server), and Kafka keeps retrying while it reconnects
// rather than failing a broker's start-up on one stall.
func (c *Client) retry(fn func() error) error {
	var deadline time.Time
	backoff := 20 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !retryable(err) {
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(c.timeout)
		}
		select {
		case <-c.quit:
			return zk.ErrClosing
		default:
		}
		if time.Now().Add(backoff).After(deadline) {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-c.quit:
			t.Stop()
			return zk.ErrClosing
		case <-t.C:
		}
		if backoff < time.Second {
			backoff *= 2
		}
	}
}

// closedErr reports ErrClosed once Close was called.
func (c *Client) closedErr() error {
	select {
	case <-c.quit:
		return ErrClosed
	default:
		return nil
	}
}

// zkLogger adapts go-zookeeper's Printf logger to logrus at DEBUG.
type zkLogger struct{ log logrus.FieldLogger }

func (l zkLogger) Printf(format string, args ...any) { l.log.Debugf("go-zookeeper: "+format, args...) }
