// Package zkshell is zookeeper-shell (Kafka's zookeeper-shell.sh, which
// wraps ZooKeeperMain), reduced to what scripts use: "ls <path>" prints
// "[a, b, c]", "get <path>" prints the data; a missing znode prints "Node
// does not exist: <path>" on stderr with exit code 1. No interactive mode
// and no connection chatter.
//
// Owns: zookeeper_shell.go; ZooKeeper only through zkutil.
//
// Concurrency: none.
package zkshell
