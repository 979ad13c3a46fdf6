package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"

	"samsa/broker/acl"
	"samsa/broker/fetchsession"
	"samsa/broker/group"
	"samsa/broker/metadata"
	"samsa/broker/quota"
	"samsa/broker/replica"
	"samsa/broker/replica/remote"
	"samsa/broker/server"
	"samsa/broker/storage"
	"samsa/broker/txn"
	"samsa/config"
	"samsa/controller"
	"samsa/peer"
	"samsa/zkutil"
)

// Broker is one Samsa broker. Create it with New, run it with Start and
// stop it with Shutdown. A Broker is started at most once.
type Broker struct {
	cfg  *config.Broker     // immutable after New
	opts Options            // immutable after New
	log  logrus.FieldLogger // immutable after New
	apis map[int16]api      // immutable after New
	meta *metadata.Cache    // internally synchronised
	mtr  *brokerMetrics     // immutable after New
	// quotas enforces client byte-rate quotas (quota_wiring.go,
	// quota_serve.go); internally synchronised.
	quotas *quota.Manager
	// dynCfg is cfg with the dynamic broker overrides of /config/brokers
	// applied (dynamic_config_apply.go); nil until Start has read them.
	dynCfg atomic.Pointer[config.Broker]
	// metaUpdates wakes waiters (CreateTopics) after each UpdateMetadata.
	metaUpdates metaWatch

	id          atomic.Int32 // broker.id, known once Start has resolved it
	brokerEpoch atomic.Int64 // czxid of /brokers/ids/<id>; 0 before registration
	stopping    atomic.Bool  // set when Shutdown starts; parked fetches answer at once
	// replicasUp is set once Start has created the replica manager; a log dir failing before
	// then is handled by Start itself (catchUpLogDirFailures), not by the storage hook.
	replicasUp atomic.Bool
	clusterID  atomic.Pointer[string]
	panics     atomic.Int64 // handler panics recovered (also counted by server)

	// Set during Start and never changed afterwards; read by handlers only
	// after Start has returned successfully (requests are served from then).
	zk       *zkutil.Client
	logs     *storage.Manager
	replicas *replica.Manager
	srv      *server.Server
	ctrl     *controller.Controller
	topics   *topicConfigs
	groups   *group.Coordinator
	txns     *txn.Coordinator // transaction coordinator (txn_wiring.go)
	txnMarks *markerWriter    // its WriteTxnMarkers clients
	fetchSrc *remote.FetchSource
	sec      *securityState // listeners' TLS and SASL (security_wiring.go)
	peerSec  []peer.Option  // inter-broker TLS/SASL options for peer clients
	// authz is the ACL authorizer (authz_wiring.go); nil when
	// authorizer.class.name is empty, and then every request is allowed.
	authz *acl.Authorizer

	producerIDs producerIDAllocator // internally locked (22_init_producer_id.go)
	// fetchSessions is the KIP-227 fetch session cache (fetch_session.go);
	// internally synchronised, immutable after New.
	fetchSessions *fetchsession.Cache

	// txnOffsets is the group coordinator's hook for transaction markers on
	// __consumer_offsets (27_write_txn_markers.go): set with the group
	// coordinator in startGroupCoordinator, before any request is served;
	// immutable after.
	txnOffsets TxnOffsetsCompleter
	// txnVerify caches KIP-890 verifications (txn_verify.go); internally
	// locked.
	txnVerify txnVerifyCache

	mu struct {
		sync.Mutex
		started  bool
		shutdown bool
		addrs    map[string]net.Addr // bound address per listener name
		cancel   context.CancelFunc  // stops the broker's goroutines
	}
	wg        sync.WaitGroup // the broker's own goroutines
	sessionCh chan struct{}  // buffer 1; a new ZooKeeper session needs re-registration
}

// New validates cfg and returns a Broker that is not started. It does no
// I/O.
func New(cfg *config.Broker, opts Options) (*Broker, error) {
	if cfg == nil {
		return nil, errors.New("broker: nil config")
	}
	if len(cfg.Listeners()) == 0 {
		return nil, errors.New("broker: no listeners configured")
	}
	if len(cfg.LogDirs()) == 0 {
		return nil, errors.New("broker: no log dirs configured")
	}
	opts = opts.withDefaults()
	b := &Broker{
		cfg:  cfg,
		opts: opts,
		log:  opts.Logger.WithField("component", "broker"),
		apis: newAPITable(),
		meta: metadata.New(),
		mtr:  newBrokerMetrics(opts.Registry),
	}
	b.quotas = newQuotaManager(cfg, opts)
	b.fetchSessions = newFetchSessionCache(cfg, opts)
	b.sessionCh = make(chan struct{}, 1)
	b.id.Store(cfg.BrokerID)
	b.mu.addrs = make(map[string]net.Addr)
	return b, nil
}

// ID returns the broker id: the configured broker.id, or the generated one
// once Start has run (-1 before, when generation is used).
func (b *Broker) ID() int32 { return b.id.Load() }

// Epoch returns the broker epoch (the czxid of this broker's registration
// znode; KIP-380), 0 before registration.
func (b *Broker) Epoch() int64 { return b.brokerEpoch.Load() }

// ClusterID returns the cluster id, "" before Start has read it.
func (b *Broker) ClusterID() string {
	if p := b.clusterID.Load(); p != nil {
		return *p
	}
	return ""
}

// Addr returns the bound address of the named listener (for example
// "PLAINTEXT"), or nil when there is no such listener or Start has not
// bound it.
func (b *Broker) Addr(listener string) net.Addr {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.addrs[listener]
}

// Config returns the broker's configuration. The caller must not modify it.
func (b *Broker) Config() *config.Broker { return b.cfg }

// IsController reports whether this broker is the active controller.
func (b *Broker) IsController() bool { return b.ctrl != nil && b.ctrl.IsActive() }

// Metadata returns the current metadata cache snapshot.
func (b *Broker) Metadata() *metadata.Snapshot { return b.meta.Snapshot() }

// ZooKeeper returns the broker's ZooKeeper client (nil before Start), for
// tools and test harnesses; the broker owns and closes it.
func (b *Broker) ZooKeeper() *zkutil.Client { return b.zk }

// Replicas returns the replica manager (nil before Start).
func (b *Broker) Replicas() *replica.Manager { return b.replicas }

// Panics returns the number of request handler panics recovered so far.
// brokertest fails a test that ends with a non-zero count.
func (b *Broker) Panics() int64 {
	n := b.panics.Load()
	if b.srv != nil {
		n += b.srv.Panics()
	}
	return n
}

func (b *Broker) String() string { return fmt.Sprintf("broker %d", b.ID()) }
