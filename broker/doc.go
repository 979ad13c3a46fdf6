// Package broker assembles a Samsa broker and answers the Kafka API: it owns
// the broker's lifecycle (ZooKeeper session, cluster and broker ids,
// meta.properties, log loading, listeners, registration under
// /brokers/ids/<id>, the controller), the single API version table
// (apis.go) and one file per Kafka API named by its key (NN_<api>.go, each
// opening with its behaviour contract). errors.go is the one place where
// internal errors become Kafka error codes. It is the only place kmsg
// requests meet the domain packages.
//
// Must never import: go-zookeeper/zk, sarama, tools. Imported only by tools
// and broker/brokertest.
//
// Concurrency: Broker's methods are safe for concurrent use. Handlers run
// on the connection goroutines of broker/server, one request at a time per
// connection and in request order; a long-poll fetch parks that goroutine
// in broker/purgatory, while an acks=all produce returns a server.Pending
// once its appends are done, so the connection can append the next
// Produce while the writer goroutine waits for the high watermark and
// answers in order (broker/server/doc.go). The broker starts these goroutines of its own, all
// stopped by Shutdown: the server's Serve loop (lifecycle.go), the
// ZooKeeper session watcher (re-registration after session expiry), the
// /config/changes listener that applies topic and dynamic broker config
// changes and client quotas (config_changes.go; topic configs and quota
// entities are re-read from ZooKeeper on each notification, there is no
// periodic refresher), the replication
// throttle loop (controller_wiring.go) and, with metrics.listener, the
// Prometheus endpoint's closer (metrics_listener.go). Through replica run
// the ISR loop and the follower fetchers; the controller and the group
// coordinator run their own goroutines, stopped by their Shutdown.
//
// Authorization (authz*.go): with authorizer.class.name every handler asks
// broker/acl before acting, through one helper per resource kind; requests
// the API table marks interBroker are checked for ClusterAction once in
// handler.Serve. With no authorizer the helpers allow everything.
//
// Start order: ZooKeeper session (chroot created) → persistent paths →
// cluster id (/cluster/id vs meta.properties) → broker id (config,
// meta.properties or /brokers/seqid) → meta.properties written → ACL cache
// loaded and its change watches armed (authorizer.class.name; its
// notification goroutine is stopped by Shutdown after the listeners) → logs
// loaded → listeners bound (advertised port 0 = bound port) → requests
// served → /brokers/ids/<id> registered (broker epoch = its czxid) →
// controller started.
//
// Shutdown order (STYLE S6.8): controlled shutdown (with
// controlled.shutdown.enable, leadership moves away while requests are
// still served) → stop accepting (listeners closed, in-flight requests
// finish or are cut at the deadline; parked fetches answer at once and the
// group coordinator stops first, answering parked group calls
// NOT_COORDINATOR) → resign the controller →
// stop the follower fetchers and wake parked requests → flush and
// checkpoint the logs (clean-shutdown marker) → deregister
// /brokers/ids/<id> → close ZooKeeper.
package broker
