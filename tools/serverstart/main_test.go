package serverstart

import (
	"testing"

	"github.com/urfave/cli/v2"

	"samsa/tools/configs"
	"samsa/tools/console"
	"samsa/tools/internal/tool"
	"samsa/tools/internal/tooltest"
	"samsa/tools/perf"
	"samsa/tools/topics"
	"samsa/zkutil/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// testCommands are the commands this package's tests run: kafka-server-start, and the client tools its tests drive against the started broker.
func testCommands(env tool.Env) []*cli.Command {
	return []*cli.Command{Command(env), topics.Command(env), console.ProducerCommand(env), console.ConsumerCommand(env), configs.Command(env), perf.ProducerCommand(env), perf.ConsumerCommand(env)}
}

// runTool runs testCommands in-process and returns stdout, stderr and the
// exit code.
func runTool(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return tooltest.RunTool(t, testCommands, stdin, args...)
}

// runApp is tool.Run over testCommands.
func runApp(args []string, env tool.Env) int { return tool.Run(args, env, testCommands) }
