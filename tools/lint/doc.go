// Package lint holds repository-rule tests that run with plain `go test ./...`, so the house
// rules hold on a machine without golangci-lint (STYLE S12.3): the import tiers of S1.1 (with
// the exact, per-package import table of the tools tree that docs/design.md documents), the
// single owner of each external dependency (S1.2) and kmsg's reach (S1.3, kmsg_test.go), znode path literals only in zkutil (S8.1), no
// raw sync/atomic functions (S6.9), a doc.go in every package (S2.5) and a String of its own on every
// struct that embeds kafka.TopicPartition (embedders_test.go).
//
// It has no non-test code beyond this file and is never imported.
package lint
