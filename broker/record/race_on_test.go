//go:build race

package record

// testIsRace shrinks expensive test inputs under the race detector.
const testIsRace = true
