// Package testwait is the one way Samsa's tests wait: poll a condition
// until it holds or a deadline passes, then fail the test with the
// condition's last answer (STYLE S11.3: no sleep as synchronisation).
//
//	testwait.For(t, 10*time.Second, func() error {
//		if got := b.State(); got != "running" {
//			return fmt.Errorf("state %s", got)
//		}
//		return nil
//	})
//
// For takes a condition that explains itself (its error is the failure
// message); Until takes a bool condition and a description of what it
// waits for. The poll interval starts at 2 ms, so a condition that is
// nearly met costs almost nothing, and doubles up to 100 ms, so a long
// wait on a loaded 2-core machine does not spin.
//
// It imports nothing of Samsa, so every package's tests (zkutil's,
// storage's, the controller's, the tools', broker/brokertest's) can use it.
// Only tests and test harnesses import it (tools/lint checks this).
package testwait
