package configchange

import (
	"context"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"

	"samsa/zkutil"
)

// Store is the ZooKeeper side of the listener; *zkutil.Client implements it.
type Store interface {
	WatchChildren(path string, fn func()) (cancel func())
	GetConfigChanges() ([]string, error)
	ReadConfigChange(node string) (entityPath string, ctimeMs int64, err error)
}

// Change is the entity one notification names.
type Change struct {
	Type string // the /config/<type> ("topics", "users", ...)
	Name string // the rest of the entity path ("orders", "alice/clients/app")
}

// Path is the notification's entity path, "<type>/<name>".
func (c Change) Path() string { return c.Type + "/" + c.Name }

// Handler reacts to the notifications of the entity types in Apply.
type Handler struct {
	// Name identifies the handler in logs.
	Name string
	// Load, if set, reads the handler's whole state (see the package doc).
	Load func() error
	// Apply holds one callback per entity type.
	Apply map[string]func(Change) error
}

// Listener dispatches /config/changes notifications to handlers.
type Listener struct {
	store    Store
	log      logrus.FieldLogger
	handlers []Handler
}

// New returns a listener over store for handlers, called in this order.
func New(store Store, log logrus.FieldLogger, handlers ...Handler) *Listener {
	return &Listener{store: store, log: log, handlers: handlers}
}

// Run processes notifications until ctx ends.
func (l *Listener) Run(ctx context.Context) {
	wake := make(chan struct{}, 1)
	signal := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	cancel := l.store.WatchChildren(zkutil.ConfigChangesPath(), signal)
	defer cancel()
	signal()
	last := int64(-1)
	loaded := make([]bool, len(l.handlers))
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		l.load(loaded)
		nodes, err := l.store.GetConfigChanges()
		if err != nil {
			l.log.WithError(err).Warn("reading config change notifications failed")
			continue
		}
		for _, n := range nodes {
			seq, err := strconv.ParseInt(strings.TrimPrefix(n, zkutil.ConfigChangeSeqPrefix), 10, 64)
			if err != nil || seq <= last {
				continue
			}
			last = seq
			entity, _, err := l.store.ReadConfigChange(n)
			if err != nil {
				continue // deleted meanwhile
			}
			typ, name, ok := strings.Cut(entity, "/")
			if !ok || typ == "" || name == "" {
				l.log.WithField("entity", entity).Debug("ignoring a config change notification without <type>/<name>")
				continue
			}
			l.dispatch(Change{Type: typ, Name: name}, loaded)
		}
	}
}

// load runs the Load of every handler not loaded yet.
func (l *Listener) load(loaded []bool) {
	for i, h := range l.handlers {
		if h.Load == nil || loaded[i] {
			continue
		}
		if err := h.Load(); err != nil {
			l.log.WithError(err).WithField("handler", h.Name).Warn("loading dynamic config failed; retrying on the next notification")
			continue
		}
		loaded[i] = true
	}
}

// dispatch hands c to every handler registered for its type.
func (l *Listener) dispatch(c Change, loaded []bool) {
	for i, h := range l.handlers {
		apply, ok := h.Apply[c.Type]
		if !ok || (h.Load != nil && !loaded[i]) {
			continue
		}
		if err := apply(c); err != nil {
			l.log.WithError(err).WithField("handler", h.Name).WithField("entity", c.Path()).Warn("applying a config change failed")
			if h.Load != nil {
				loaded[i] = false // load everything again on the next wake
			}
		}
	}
}
