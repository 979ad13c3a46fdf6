//go:build invariants || race

package group

// invariantsEnabled turns on checkInvariants after every group event in
// race and invariants builds (STYLE S5.7).
const invariantsEnabled = true
