package tools

import (
	"bytes"
	"strings"
	"testing"

	"samsa/zkutil/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// runTool runs the samsa CLI in-process and returns stdout, stderr and the
// exit code.
func runTool(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(append([]string{"samsa"}, args...), Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), code
}
