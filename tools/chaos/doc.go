// Command samsa-chaos is the reliability harness's command line
// (bin/samsa-chaos.sh builds and runs it; package chaos is the harness).
//
//	samsa-chaos --short --seed N     a short seeded run (CI, < 4 minutes)
//	samsa-chaos --cycles 100         the long matrix
//	samsa-chaos --cleanup            remove a crashed run's leftovers
//
// It prints one summary line on stdout (lost=, duplicates=, cycles=) and
// exits 1 when an invariant broke or the cluster did not recover, 2 on a
// harness error. Progress goes to stderr.
package main
