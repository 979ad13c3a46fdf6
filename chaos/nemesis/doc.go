// Package nemesis holds the chaos harness's faults. A Nemesis starts one
// fault on targets it draws from the run's seeded random source and
// returns the Heal that undoes exactly that fault. The runner calls Heal
// after the fault's hold time, on error, on a signal and at exit (defer),
// and then heals everything once more (HealAll) before it waits for
// recovery, so a fault never outlives its cycle.
//
// Targets: "a broker" is drawn uniformly; "the leader"/"a follower" are of
// a partition of the workload topic drawn uniformly, read from metadata at
// fault time; the controller is read from ZooKeeper; the ZooKeeper leader
// from the servers' "srvr" answers.
//
// Not available here (listed by --help with the reason): slow disk (cgroup
// io.max throttles a block device; the brokers' log dirs are tmpfs, and
// this machine's io controller is bound to cgroup v1), clock jumps (a time
// namespace offsets only CLOCK_MONOTONIC and CLOCK_BOOTTIME, not the
// wall clock; setting the host clock would disturb every other process),
// netem delay and loss (the kernel has no sch_netem: loss uses iptables'
// statistic match, delay uses tbf).
package nemesis
