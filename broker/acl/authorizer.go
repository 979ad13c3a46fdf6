package acl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/principal"
	"samsa/zkutil"
)

// Authorizer class names that switch authorization on
// (authorizer.class.name); the second is Kafka's deprecated alias.
const (
	ClassAclAuthorizer       = "kafka.security.authorizer.AclAuthorizer"
	ClassSimpleAclAuthorizer = "kafka.security.auth.SimpleAclAuthorizer"
)

// changeExpiration is how old a change notification gets before a broker
// deletes it (ZkNodeChangeNotificationListener.changeExpirationMs).
const changeExpiration = 15 * time.Minute

// Config configures an Authorizer.
type Config struct {
	// SuperUsers may do everything (super.users).
	SuperUsers []principal.Principal
	// AllowEveryoneIfNoACLFound opens a resource no ACL applies to
	// (allow.everyone.if.no.acl.found).
	AllowEveryoneIfNoACLFound bool
	// Logger receives the authorizer's logs (component=acl). Nil discards.
	Logger logrus.FieldLogger
}

// ParseSuperUsers parses super.users: principals separated by ';'
// ("User:Bob;User:Alice"), blanks ignored.
func ParseSuperUsers(s string) ([]principal.Principal, error) {
	var out []principal.Principal
	for _, part := range strings.Split(s, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		p, err := ParsePrincipal(part)
		if err != nil {
			return nil, fmt.Errorf("super.users: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Authorizer is Kafka 2.8's AclAuthorizer: a cache of every ACL in
// ZooKeeper, kept current by the change notifications, and the decision
// functions over it.
//
// Authorize and AuthorizeByResourceType are safe for concurrent use and
// never block: they read an immutable snapshot. CreateACLs and DeleteACLs
// write ZooKeeper and are serialised with the notification processing by
// mu, as Kafka serialises them with its lock. Start launches one goroutine
// that processes notifications; Close stops it.
type Authorizer struct {
	store       *Store
	zk          *zkutil.Client
	log         logrus.FieldLogger
	superUsers  map[principal.Principal]bool // immutable after New
	allowIfNone bool                         // immutable after New
	snap        atomic.Pointer[snapshot]
	wake        chan struct{} // buffer 1; a change queue changed
	cancelWatch []func()
	wg          sync.WaitGroup
	cancel      context.CancelFunc
	lastSeen    map[string]string // pattern type → last processed child; owned by mu
	mu          sync.Mutex        // serialises cache writers (ZooKeeper writes and notification reloads)
	now         func() time.Time
}

// New returns an Authorizer over zk with an empty cache; Start loads it.
func New(zk *zkutil.Client, cfg Config) *Authorizer {
	log := cfg.Logger
	if log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		log = l
	}
	a := &Authorizer{store: NewStore(zk), zk: zk, log: log.WithField("component", "acl"),
		superUsers: map[principal.Principal]bool{}, allowIfNone: cfg.AllowEveryoneIfNoACLFound,
		wake: make(chan struct{}, 1), lastSeen: map[string]string{}, now: time.Now}
	for _, p := range cfg.SuperUsers {
		a.superUsers[p] = true
	}
	a.snap.Store(emptySnapshot())
	return a
}

// Start watches both change queues, loads every ACL and starts the
// notification goroutine (AclAuthorizer.configure + startZkChangeListeners).
// The watches are armed before the load, so no change is missed.
func (a *Authorizer) Start(ctx context.Context) error {
	poke := func() {
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
	for _, pt := range zkutil.ACLPatternTypes() {
		a.cancelWatch = append(a.cancelWatch, a.zk.WatchChildren(zkutil.ACLChangesPath(pt), poke))
	}
	a.mu.Lock()
	snap, err := a.store.LoadAll()
	if err == nil {
		a.snap.Store(snap)
		// Everything up to now is in the snapshot: start after the newest
		// notification.
		for _, pt := range zkutil.ACLPatternTypes() {
			nodes, err2 := a.zk.GetACLChanges(pt)
			if err2 != nil {
				err = err2
				break
			}
			if len(nodes) > 0 {
				a.lastSeen[pt] = nodes[len(nodes)-1]
			}
		}
	}
	a.mu.Unlock()
	if err != nil {
		a.stopWatches()
		return fmt.Errorf("acl: load: %w", err)
	}
	// The goroutine lives until Close, not until ctx (a start timeout) ends.
	ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	a.wg.Add(1)
	go a.run(ctx)
	a.log.WithField("resources", len(snap.acls)).Info("ACL cache loaded")
	return nil
}

func (a *Authorizer) stopWatches() {
	for _, c := range a.cancelWatch {
		c()
	}
	a.cancelWatch = nil
}

// Close stops the notification goroutine and the watches.
func (a *Authorizer) Close() {
	if a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	a.stopWatches()
}

// retryBackoff is the pause before re-reading the change queues after a
// ZooKeeper error (Kafka retries its notification processing likewise).
const retryBackoff = time.Second

func (a *Authorizer) run(ctx context.Context) {
	defer a.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		if a.processChanges() {
			continue
		}
		t := time.NewTimer(retryBackoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			a.poke()
		}
	}
}

// processChanges reloads every resource named by a notification newer than
// the last processed one, then deletes notifications older than 15 minutes
// (ZkNodeChangeNotificationListener.processNotifications and
// purgeObsoleteNotifications). It reports false when ZooKeeper failed and
// the queues must be read again later.
func (a *Authorizer) processChanges() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	ok := true
	for _, pt := range zkutil.ACLPatternTypes() {
		nodes, err := a.zk.GetACLChanges(pt)
		if err != nil {
			a.log.WithError(err).Warn("reading ACL change notifications")
			ok = false
			continue
		}
		for _, n := range nodes {
			fresh := n > a.lastSeen[pt]
			z, ctime, err := a.zk.ReadACLChange(pt, n)
			if errors.Is(err, zkutil.ErrNoNode) {
				continue // purged by another broker
			}
			if fresh {
				if err == nil {
					if r, valid := fromZK(z); valid {
						err = a.reloadLocked(r)
					}
				}
				if errors.Is(err, zkutil.ErrMalformed) {
					a.log.WithError(err).WithField("node", n).Warn("skipping a malformed ACL change notification")
				} else if err != nil {
					a.log.WithError(err).WithField("node", n).Warn("processing ACL change notification; will retry")
					ok = false
					break // keep lastSeen before n: it is read again
				}
				a.lastSeen[pt] = n
			}
			if ctime > 0 && a.now().Sub(time.UnixMilli(ctime)) > changeExpiration {
				_ = a.zk.DeleteACLChange(pt, n)
			}
		}
	}
	return ok
}

func (a *Authorizer) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// reloadLocked re-reads one resource from ZooKeeper into the cache
// (processAclChangeNotification).
func (a *Authorizer) reloadLocked(r Resource) error {
	es, zkv, err := a.store.Get(r)
	if err != nil {
		return err
	}
	a.snap.Store(a.snap.Load().with(r, es, zkv))
	a.log.WithFields(logrus.Fields{"resource": r.String(), "acls": len(es)}).Info("ACLs reloaded")
	return nil
}

// isSuper reports whether p is in super.users.
func (a *Authorizer) isSuper(p principal.Principal) bool { return a.superUsers[p] }

// Authorize reports whether p, connected from host (an IP address without
// a leading slash), may do op on the literal resource (t, name): Kafka
// AclAuthorizer.authorizeAction. Safe for concurrent use; never blocks.
func (a *Authorizer) Authorize(p principal.Principal, host string, op Operation, t ResourceType, name string) bool {
	if a.isSuper(p) {
		return true
	}
	var buf [8][]Entry
	sets := a.snap.Load().matching(buf[:0], t, name)
	return decide(sets, p, host, op, a.allowIfNone)
}

// AuthorizeByResourceType reports whether p may do op on at least one
// resource of type t (KIP-679; used by InitProducerId without a
// transactional id: Write on any topic grants idempotence).
func (a *Authorizer) AuthorizeByResourceType(p principal.Principal, host string, op Operation, t ResourceType) bool {
	if a.isSuper(p) {
		return true
	}
	return decideByType(a.snap.Load().acls, t, p, host, op, a.allowIfNone)
}

// ACLs returns the cached bindings matching f (Authorizer.acls), sorted by
// resource.
func (a *Authorizer) ACLs(f Filter) []Binding { return a.snap.Load().list(f) }

// CreateACLs stores bindings in ZooKeeper and the cache, and returns one
// error per binding (nil: created or already present).
func (a *Authorizer) CreateACLs(bindings []Binding) []error {
	a.mu.Lock()
	defer a.mu.Unlock()
	errs, changes := a.store.Create(bindings)
	a.applyLocked(changes)
	return errs
}

// DeleteACLs removes the bindings matching each filter and returns, per
// filter, what it removed. Filters that name no exact resource act on the
// cached resources, as in Kafka.
func (a *Authorizer) DeleteACLs(filters []Filter) [][]Deleted {
	a.mu.Lock()
	defer a.mu.Unlock()
	snap := a.snap.Load()
	known := make([]Resource, 0, len(snap.acls))
	for r := range snap.acls {
		known = append(known, r)
	}
	out, changes := a.store.Delete(filters, known)
	a.applyLocked(changes)
	return out
}

func (a *Authorizer) applyLocked(changes []Change) {
	snap := a.snap.Load()
	for _, c := range changes {
		snap = snap.with(c.Resource, c.Entries, c.ZkVersion)
	}
	a.snap.Store(snap)
}
