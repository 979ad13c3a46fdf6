package tools

// The assembly: every command family's subcommands in one urfave/cli
// application (Commands), and the NewApp/Run entry points tools/samsa calls.

import (
	"github.com/urfave/cli/v2"

	"samsa/tools/acls"
	"samsa/tools/admin"
	"samsa/tools/configs"
	"samsa/tools/console"
	"samsa/tools/doctor"
	"samsa/tools/dumplog"
	"samsa/tools/groups"
	"samsa/tools/internal/tool"
	"samsa/tools/perf"
	"samsa/tools/reassign"
	"samsa/tools/replicaverify"
	"samsa/tools/serverstart"
	"samsa/tools/topics"
	"samsa/tools/txn"
	"samsa/tools/verifiable"
	"samsa/tools/zkmigrate"
	"samsa/tools/zkshell"
)

// Env is the process environment a command runs in (tool.Env): tools/samsa
// passes the real streams, tests pass buffers.
type Env = tool.Env

// Commands returns the samsa subcommands, one per Kafka script, in the order
// --help lists them. Each family lives in its own package (doc.go).
func Commands(env Env) []*cli.Command {
	return []*cli.Command{
		serverstart.Command(env),
		topics.Command(env),
		console.ProducerCommand(env),
		console.ConsumerCommand(env),
		zkshell.Command(env),
		zkmigrate.Command(env),
		configs.Command(env),
		dumplog.Command(env),
		perf.ProducerCommand(env),
		perf.ConsumerCommand(env),
		perf.E2ELatencyCommand(env),
		admin.GetOffsetsCommand(env),
		admin.BrokerAPIVersionsCommand(env),
		admin.DeleteRecordsCommand(env),
		admin.LogDirsCommand(env),
		doctor.Command(env),
		reassign.Command(env),
		reassign.LeaderElectionCommand(env),
		reassign.PreferredReplicaElectionCommand(env),
		groups.Command(env),
		txn.Command(env),
		verifiable.ProducerCommand(env),
		verifiable.ConsumerCommand(env),
		replicaverify.Command(env),
		acls.Command(env),
	}
}

// NewApp builds the samsa command-line application: one subcommand per
// Kafka script (kafka-topics, kafka-console-producer, ...). It never calls
// os.Exit; use Run for an exit code.
func NewApp(env Env) *cli.App { return tool.NewApp(env, Commands) }

// Run runs the application with args (args[0] is the program name) and
// returns the process exit code. Errors not yet printed are written to
// env.Stderr.
func Run(args []string, env Env) int { return tool.Run(args, env, Commands) }
