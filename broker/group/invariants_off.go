//go:build !invariants && !race

package group

const invariantsEnabled = false
