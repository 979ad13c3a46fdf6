// Package zktest runs a real ZooKeeper for tests: Debian's zookeeper package
// (/usr/share/java/zookeeper.jar, `apt-get install zookeeper`) started as a
// standalone server on a free 127.0.0.1 port in a temporary directory, one
// JVM per test binary. Each test gets its own chroot (Server.Chroot), so tests
// share the JVM without seeing each other's znodes, and ExpireSession forces
// a ZooKeeper session expiry the standard way (a second connection attaches
// to the session with its id and password and closes it). Server.Proxy puts a
// TCP proxy in front of the server to inject connection loss (DropConnections)
// or a partition (Block/Unblock; held past the session timeout it expires the
// session). Server.Restart restarts the JVM on the same port and data
// directory (use a server of your own from StartServer for that). StartTLS
// starts a server of the test's own with a TLS client port that requires a
// client certificate, from a CA it makes (tlstest); StartDigest one for a
// JAAS Client digest identity, with DigestSessions to check who may change
// what that identity wrote.
//
// Usage:
//
//	func TestMain(m *testing.M) { zktest.Main(m) }
//
//	func TestZKSomething(t *testing.T) {
//		srv := zktest.Start(t)
//		c, err := zkutil.Connect(ctx, zkutil.Config{Connect: srv.Chroot(t)})
//		...
//		srv.ExpireSession(t, c)
//	}
//
// Must never be imported by non-test code except broker/brokertest. It
// imports zkutil and the test certificate maker
// broker/security/tlsconf/tlstest, and nothing else of Samsa.
//
// Concurrency: Start, Chroot and ExpireSession are safe from parallel tests.
// The JVM uses a small heap and the C1 compiler only (-XX:TieredStopAtLevel=1)
// to start fast; it is killed when the test process dies (Pdeathsig), and
// Main stops it cleanly.
package zktest
