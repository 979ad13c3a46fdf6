//go:build !invariants && !race

package group

// invariantsEnabled is false in release builds: checkInvariants walks every
// member and offset of a group after each event, a cost only race and
// invariants builds pay (STYLE S5.7).
const invariantsEnabled = false
