// Package tooltest holds the test helpers the tools packages share: running
// commands in-process (RunTool, StartTool), golden files (CheckGolden, with
// go test -update), the bin/ scripts (RunScript) and the small fixtures
// several families' tests start (ZKCluster, GroupFixture, FreePort).
//
// Owns: nothing a binary links; only _test.go files import it. Each helper
// takes the build function of the commands the test needs (a package's
// own, plus the families its test drives), so a package's tests never
// import samsa/tools and the command packages stay free of cycles.
//
// Concurrency: StartTool runs one command in a goroutine and stops it at
// cleanup; LockedBuffer is safe for a command writing while the test reads.
package tooltest
