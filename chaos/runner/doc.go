// Package runner is one seeded chaos run: it builds the cluster (package
// cluster), creates the workload topic, starts the workload, applies
// Cycles faults drawn by the seed from the chosen nemeses (each held for a
// seeded time, then healed, then the cluster waited on until it is whole:
// every process up, every broker registered, every partition's ISR full),
// stops the workload, reads the whole log back, checks the history
// (package checker) and returns a Summary. Everything the run made is
// removed when it returns, and on SIGINT/SIGTERM (the caller cancels ctx).
//
// Files in Options.Work: history.jsonl (the history), report.md (the
// per-fault table), zkN/ and bN/ (configs, process logs).
//
// The seed fixes the fault schedule, targets and hold times; what the
// cluster does under them still depends on timing, so a seed reproduces
// the faults, not the exact history.
package runner
