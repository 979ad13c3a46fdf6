// Package cluster runs the chaos harness's processes, each in its own
// network namespace (package netns): a 3-server ZooKeeper ensemble from
// Debian's jar (QuorumPeerMain, zoo.cfg with server.1..3 lines, myid files)
// and 3 to 5 samsa brokers (`samsa kafka-server-start`).
//
// Node names and addresses: ZooKeeper servers "zk1".."zk3" at 10.77.0.11-13
// (client port 2181, quorum 2888, election 3888); brokers "b1".."bN" at
// 10.77.0.1-N, broker.id N, listener PLAINTEXT://10.77.0.N:9092.
//
// Each broker's log dir is a tmpfs of DiskBytes mounted at
// <work>/bN/disk (mount source "samsa-chaos"), so a full disk is one filler
// file away and never touches the host's disk; with Options.LoopDisks it is
// ext4 on a loop device instead, so SlowDisk can throttle it (slowdisk.go).
// Processes are childproc.Procs with Pdeathsig SIGKILL and their own
// process group: they die with the harness even when it is killed itself.
//
// Broker settings are the durable ones the bar names: RF 3,
// min.insync.replicas 2, unclean.leader.election.enable false (or true with
// Options.Unclean), acks=all on the clients; zookeeper.session.timeout.ms
// 6000 so a zombie (SIGSTOP) outlives its session within a short cycle.
package cluster
