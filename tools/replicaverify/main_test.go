package replicaverify

import (
	"testing"

	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
	"samsa/tools/internal/tooltest"
	"samsa/zkutil/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// testCommands are the commands this package's tests run: its own kafka-replica-verification.
func testCommands(env tool.Env) []*cli.Command {
	return []*cli.Command{Command(env)}
}

// runTool runs testCommands in-process and returns stdout, stderr and the
// exit code.
func runTool(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return tooltest.RunTool(t, testCommands, stdin, args...)
}

// runApp is tool.Run over testCommands.
func runApp(args []string, env tool.Env) int { return tool.Run(args, env, testCommands) }
