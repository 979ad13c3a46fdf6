package zktest

import (
	"os"
	"sync"
	"testing"
)

// shared is the one ZooKeeper of this test binary, started by the first
// Start call. zktest is test-only code, so this package-level state is the
// S1.5 test-hook exception.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Start returns the test binary's shared ZooKeeper, launching it on first
// use. If ZooKeeper cannot start (for example the Debian package is not
// installed) the test fails with the reason. Give each test its own
// namespace with srv.Chroot(t). The server stops when Main returns, and in
// any case dies with the test process.
func Start(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() { shared.srv, shared.err = StartServer() })
	if shared.err != nil {
		tb.Fatalf("%v", shared.err)
	}
	return shared.srv
}

// Main runs the tests and then stops the shared server. Use it from TestMain:
//
//	func TestMain(m *testing.M) { zktest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}
