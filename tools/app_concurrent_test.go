package tools

import (
	"bytes"
	"sync"
	"testing"
)

// TestToolRunConcurrently: two apps parse flags at the same time (a test
// runs a consumer in the background while it runs another tool). Under
// -race this fails if any flag shared between apps is written while
// parsing; urfave/cli's package-level help flag is (BoolFlag.Apply records
// its default), hence helpFlag.
func TestToolRunConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out bytes.Buffer
			if code := Run([]string{"samsa", "kafka-topics", "--help"}, Env{Stdout: &out, Stderr: &out}); code != 0 {
				t.Errorf("kafka-topics --help: exit %d\n%s", code, out.String())
			}
		}()
	}
	wg.Wait()
}
