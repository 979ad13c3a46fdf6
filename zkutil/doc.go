// Package zkutil owns everything Samsa keeps in ZooKeeper: every znode path,
// every znode JSON codec, the ZooKeeper session (chroot, reconnect, new
// session after expiry, persistent watches) and the domain operations the
// broker, the controller and the tools perform, including the controller's
// epoch-fenced writes. It is Samsa's kafka.zk.KafkaZkClient + ZkData +
// ZooKeeperClient.
//
// Must never import: any other Samsa package (broker/..., controller, tools,
// config), kmsg, sarama. It is the only package that imports
// github.com/go-zookeeper/zk (STYLE S1.2, S8.1); zkutil/zktest is its test
// companion.
//
// # Layers
//
//	paths.go        one function per znode kind (BrokerIDPath, PartitionStatePath, ...)
//	codec_*.go      Kafka 2.8's JSON, byte-compatible in content (key order is free)
//	conn.go raw.go  Client: Connect, chroot, retry over connection loss, raw ops
//	multi.go        atomic multi-ops (CreateOp, SetOp, DeleteOp, CheckOp)
//	watch.go        persistent watches re-armed after each one-shot ZooKeeper watch
//	queue.go        the dispatcher: watch events to callbacks in ZooKeeper's order
//	sniff.go        connection wrapper: session credentials for zktest, and the
//	                ordering that hides go-zookeeper's post-reconnect lastZxid race
//	hostprovider.go server choice on reconnect (immediate retries, then 1 s rounds)
//	errors.go       ZooKeeper errors → zkutil sentinels
//	ops_*.go        domain operations (RegisterBroker, ElectController, CreateTopic, ...)
//	log_dir_event.go log-dir failure notifications with their event type (KIP-112;
//	                the writer WriteLogDirEventNotification is in ops_notify.go)
//
// # Concurrency contract
//
// A Client is safe for concurrent use; its methods block until ZooKeeper
// answers (retrying across connection loss for up to ConnectionTimeout after the first failure) and
// may be called from any goroutine except the dispatcher (see below). The
// Client starts: go-zookeeper's connection goroutines and one dispatcher
// goroutine (which re-arms watches with a short-lived bounded worker pool per
// batch), and a retry goroutine only for a watch whose re-arm failed with a
// non-connection error. Close stops and waits for all of them.
//
// Watch callbacks (WatchData, WatchExists, WatchChildren, GetW) and session
// hooks (OnNewSession) run one at a time on the dispatcher goroutine. They
// must only enqueue an event for their owner (the controller's event queue,
// the broker's lifecycle loop) and return: they must not block and must not
// call Close. A callback that calls another Client method does not deadlock,
// but it delays every other callback, so do not.
//
// # Watch order
//
// Callbacks run in the order in which ZooKeeper delivered the events that
// fired them, across all watches of the Client: ZooKeeper sends a session's
// watch events in zxid order, go-zookeeper's receive loop hands each one to
// onEvent before it reads the next, and onEvent appends the callbacks of the
// watches it fires to the dispatcher's queue (queue.go) without waiting. So
// when /brokers/ids changes and then /brokers/topics, the controller's
// broker-change event is enqueued before its topic-change event, as on
// Kafka's ZooKeeper event thread (ZooKeeperClient, ControllerEventManager).
// Each callback runs after its ZooKeeper watch is armed again, so a read
// made by the work it enqueues sees, or is followed by a callback for, every
// later change.
//
// Boundedness: a watch has at most one queued call. An event for a watch
// whose call is still queued merges into it and keeps the earlier place
// (the call has not run, so it reads the newer state; everything before it
// in ZooKeeper's order is still before it). The queue is thus at most one
// entry per registered watch plus one session entry; a slow callback delays
// the later ones, never drops them (it is logged past one second), and
// go-zookeeper's receive loop never waits for a consumer.
//
// Lock order: go-zookeeper's watcher lock → dispatcher.mu (go-zookeeper calls
// onEvent under its watcher lock when it drops watches); dispatcher.mu and
// Client.mu are leaves, never held together, and never held while calling
// go-zookeeper or a callback.
//
// Session expiry: go-zookeeper opens a new session on the same Client.
// Ephemeral znodes of the old session (/brokers/ids/<id>, /controller,
// consumer registrations) are gone. Callbacks queued before the expiry
// still run. The dispatcher then re-arms every persistent watch on the new
// session, runs the OnNewSession hooks (registration order), with which the
// broker re-registers and re-runs controller election (Kafka's
// SessionExpirationHandler / registerBrokerInZk + elect), and calls every
// persistent watch once (registration order; changes may have been missed),
// all before the callbacks of any event of the new session. A GetW watch
// fires once when the expiry drops it.
//
// Reconnects: after a dropped connection the Client retries each server twice
// at once (hostprovider.go), then once a second per round; requests issued
// meanwhile are retried until ConnectionTimeout.
//
// Non-obvious: go-zookeeper v1.0.4 has an unsynchronised read of its last
// zxid right after a reconnect (upstream samuel/go-zookeeper#260). It is
// harmless, but the race detector flags it whenever a connection drops while
// watches are set. sniff.go orders the two accesses by holding the first
// post-handshake read until the SetWatches request is written (at most
// 200 ms), so -race runs of Samsa stay clean. Remove it when upstream fixes
// the field.
//
// # Errors
//
// ZooKeeper errors are translated into ErrNoNode, ErrNodeExists,
// ErrBadVersion, ErrNotEmpty, ErrSessionExpired, ErrConnectionLoss and
// ErrClosed, wrapped with the operation and path. Every controller write is a
// multi whose first op checks the zkVersion of /controller_epoch (KAFKA-6082);
// when that check fails the error wraps ErrControllerMoved and the controller
// must resign, never retry. Decoders never panic on bad bytes: they return
// errors wrapping ErrMalformed.
//
// # Znode tree (Kafka 2.8 ZooKeeper mode, all under the chroot)
//
//	/
//	├── controller                          ephemeral  {"version":1,"brokerid":1,"timestamp":"1620000000000"}
//	├── controller_epoch                    persistent 7            (ASCII; its zkVersion fences controller writes)
//	├── brokers
//	│   ├── ids
//	│   │   └── <id>                        ephemeral  broker registration v4/v5; czxid = broker epoch
//	│   ├── topics
//	│   │   └── <topic>                     persistent {"version":2,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}
//	│   │       └── partitions              persistent (no data)
//	│   │           └── <p>                 persistent (no data)
//	│   │               └── state           persistent {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}
//	│   └── seqid                           persistent (no data; zkVersion = broker id sequence)
//	├── admin
//	│   ├── delete_topics
//	│   │   └── <topic>                     persistent (no data; deletion marker)
//	│   ├── reassign_partitions             persistent {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}
//	│   └── preferred_replica_election      persistent {"version":1,"partitions":[{"topic":"t","partition":0}]}
//	├── isr_change_notification
//	│   └── isr_change_0000000042           persistent-sequential {"version":1,"partitions":[{"topic":"t","partition":0}]}
//	├── log_dir_event_notification
//	│   └── log_dir_event_0000000003        persistent-sequential {"version":1,"broker":3,"event":1}
//	├── config
//	│   ├── changes
//	│   │   └── config_change_0000000007    persistent-sequential {"version":2,"entity_path":"topics/foo"}
//	│   ├── topics/<topic>                  persistent {"version":1,"config":{"retention.ms":"86400000"}}
//	│   ├── clients/<id>  users/<u>  brokers/<id>|<default>  ips/<ip>   (same JSON)
//	│   ├── samsa_log_end_replicas/<topic>  persistent {"version":1,"config":{"replicas":"0:3,1:3"}} (Samsa only)
//	├── cluster
//	│   └── id                              persistent {"version":"1","id":"Kc7R0hZsQpWm0j1dVhXb3g"}
//	├── latest_producer_id_block            persistent {"version":1,"broker":2,"block_start":"3000","block_end":"3999"}
//	├── feature                             persistent {"version":1,"status":1,"features":{}}
//	└── consumers
//	    └── <group>
//	        ├── ids/<consumerId>            ephemeral  {"version":1,"subscription":{"t":1},"pattern":"static","timestamp":"1467000000000"}
//	        ├── owners/<topic>/<p>          ephemeral  grp1_host1-1467000000000-3f2a9c1b-0
//	        └── offsets/<topic>/<p>         persistent 1234         (ASCII next offset)
//
// Broker registration (/brokers/ids/<id>, v4; v5 adds "features"):
//
//	{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},
//	 "endpoints":["PLAINTEXT://kafka1:9092","SSL://kafka1:9093"],
//	 "rack":"dc1","jmx_port":-1,"host":"kafka1","timestamp":"1620000000000","port":9092,"version":4}
//
// host/port name the first PLAINTEXT endpoint (null and -1 without one);
// timestamps are decimal strings; partition ids are string keys; config
// values are strings. Decoders read every older version Kafka wrote
// (registration v1..v5, assignment v1..v3, config change v1/v2 and the 0.8
// quoted topic name) and ignore unknown keys.
//
// Persistent paths created at broker start (PersistentPaths, Kafka 2.8):
// /consumers, /brokers/ids, /brokers/topics, /config/changes,
// /admin/delete_topics, /brokers/seqid, /isr_change_notification,
// /latest_producer_id_block, /log_dir_event_notification and
// /config/{topics,clients,users,brokers,ips}.
package zkutil
