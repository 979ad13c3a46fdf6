// Package brokertest is Samsa's httptest: an in-process cluster of real
// brokers on 127.0.0.1:0, each with its own temporary log dir, coordinated
// by a real ZooKeeper (zktest: one server per test binary, a fresh chroot
// per cluster), plus helpers to drive it with Sarama and to wait for
// conditions.
//
// Use it from tests only:
//
//	func TestMain(m *testing.M) { brokertest.Main(m) }
//
//	func TestClusterSomething(t *testing.T) {
//		c := brokertest.NewCluster(t, 3)
//		c.CreateTopic(t, "t", 3, 3)
//		p := c.SyncProducer(t, nil)
//		...
//	}
//
// Every cluster is closed by t.Cleanup, which then fails the test if a
// request handler panicked (broker.Panics() > 0) or if broker goroutines
// are still running.
//
// For faults that need a real process (SIGKILL, SIGSTOP/SIGCONT, a
// ZooKeeper session that expires because the broker is frozen),
// NewProcCluster runs brokers as child processes of the test binary
// (`samsa kafka-server-start` on generated properties, the binary built once
// per test binary by SamsaBinary): Kill, Stop (SIGTERM), Pause, Resume,
// Start and Restart on the same port and log dir; partition state is read
// from ZooKeeper; each broker's output goes to a file that is copied to the
// test log when the test fails; cleanup SIGKILLs every process. Network
// faults between processes go through proxies: ZKThrough restarts a broker
// with its ZooKeeper connection through a zktest.Proxy (cut one broker
// from ZooKeeper), InterBrokerThrough with its inter-broker listener
// advertised at a TCPProxy (Blackhole/Heal: inter-broker traffic held
// while clients still connect directly); SetProperties rewrites a stopped
// broker's server.properties.
//
// The helpers shared by the handler tests (package broker) and the cluster
// tests (broker/clustertest) live here too: RawConn for protocol-level
// requests and the one-request helpers over it, ScrapeValue/WaitMetric for
// the metrics endpoint, ProduceConsume, WriteACLs and SecureCluster.
//
// Must never be imported by non-test code.
//
// Concurrency: a Cluster is used by the test goroutine; Broker, Kill,
// Restart and the other methods may be called from several goroutines but
// are serialised by the cluster's mutex.
package brokertest
