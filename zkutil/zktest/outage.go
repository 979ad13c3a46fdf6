package zktest

import (
	"fmt"
	"syscall"
)

// Halt stops the server process (SIGTERM, then SIGKILL after 5 s) and
// waits for it to exit; clients see connection loss until Resume. Every
// test sharing the server sees the outage.
func (s *Server) Halt() { s.kill() }

// Resume starts the server again on the same port and data directory and
// waits until it answers. Sessions whose clients reconnect within their
// timeout of the server's return survive: ZooKeeper restarts every
// session's expiry clock when it loads them.
func (s *Server) Resume() error { return s.start() }

// Freeze stops the server process with SIGSTOP: connections stay open and
// nothing is answered (a hung server, not a dead one) until Thaw.
func (s *Server) Freeze() error { return s.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server with SIGCONT. ZooKeeper then expires the
// sessions that did not heartbeat for their timeout while it was frozen.
func (s *Server) Thaw() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.mu.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return fmt.Errorf("zktest: server not running")
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("zktest: %v to zookeeper: %w", sig, err)
	}
	return nil
}
