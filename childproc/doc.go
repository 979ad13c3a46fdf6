// Package childproc is one restartable child process, shared by the
// process harnesses: broker/brokertest's ProcCluster (brokers as children
// of a test binary) and chaos/cluster (ZooKeeper servers and brokers in
// network namespaces).
//
// A Proc starts its command (NewCmd builds a fresh exec.Cmd per
// incarnation) with stdout and stderr appended to LogPath after a banner
// line, SIGKILLed by the kernel if the parent dies (Pdeathsig), optionally
// in its own process group. One goroutine per incarnation waits for the
// exit; Wait, Running and ExitErr read its result.
//
// Invariants: at most one incarnation runs at a time (Start is a no-op
// while one does); Paused is true from a SIGSTOP sent through Signal until
// a SIGCONT or SIGKILL; a signal to a process that is not running is a
// no-op, never an error. Locking: mu guards every field below it; no call
// holds mu while waiting.
package childproc
