package zkmigrate

import (
	"testing"

	"github.com/urfave/cli/v2"

	"samsa/broker/brokertest"
	"samsa/tools/internal/tool"
	"samsa/tools/internal/tooltest"
)

func TestMain(m *testing.M) { brokertest.Main(m) }

func testCommands(env tool.Env) []*cli.Command { return []*cli.Command{Command(env)} }

// runTool runs zookeeper-security-migration in-process and returns stdout,
// stderr and the exit code.
func runTool(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return tooltest.RunTool(t, testCommands, "", append([]string{"zookeeper-security-migration"}, args...)...)
}
