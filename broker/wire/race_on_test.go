//go:build race

package wire

// raceAllocFactor: under -race, append(x, make([]T, n)...) is not fused into one allocation,
// so kmsg's array decoding allocates twice.
const raceAllocFactor = 2
