package zktest

// Halt stops the server process (SIGTERM, then SIGKILL after 5 s) and
// waits for it to exit; clients see connection loss until Resume. Every
// test sharing the server sees the outage.
func (s *Server) Halt() { s.kill() }

// Resume starts the server again on the same port and data directory and
// waits until it answers. Sessions whose clients reconnect within their
// timeout of the server's return survive: ZooKeeper restarts every
// session's expiry clock when it loads them.
func (s *Server) Resume() error { return s.start() }
