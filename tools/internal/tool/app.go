package tool

// The application every subcommand runs in: Env, NewApp/Run with Kafka's
// usage-error handling and exit codes, and the error types worded as Kafka's
// tools word their messages.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"
)

// Env is the process environment a command runs in. Tests pass buffers and
// run commands in-process; tools/samsa passes the real streams.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Context, when not nil, stops long-running commands (kafka-server-start)
	// when it ends, as SIGTERM does. Tests use it; tools/samsa leaves it nil.
	Context context.Context
	// Logger is the process logger configured by tools/samsa. Commands add
	// component=<command> and hand it to the packages they drive.
	Logger logrus.FieldLogger
}

// ExitError is returned by a command that already printed its message and
// wants the process to end with code.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("tools: exit status %d", e.Code) }

// ErrorExitAction runs run as a command's action; an error is printed to
// stderr and the command exits with status 1.
func ErrorExitAction(env Env, run func(*cli.Context, Env) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if err := run(c, env); err != nil {
			fmt.Fprintln(env.Stderr, err)
			return ExitError{1}
		}
		return nil
	}
}

// Error is a message printed to the user exactly as Kafka's tools word
// it (capitalised, with punctuation), so it does not follow Go's error-string
// style.
type Error string

func (e Error) Error() string { return string(e) }

// Errorf is Error with fmt formatting.
func Errorf(format string, args ...any) error { return Error(fmt.Sprintf(format, args...)) }

// CommandFailure is a failure Kafka's tools report as an unexpected
// exception (a header line, then the message), worded as Kafka does.
type CommandFailure string

func (e CommandFailure) Error() string { return string(e) }

// Stderr is env's stderr, io.Discard when unset.
func Stderr(env Env) io.Writer {
	if env.Stderr == nil {
		return io.Discard
	}
	return env.Stderr
}

// Logger is the logger a client-side command (kafka-topics,
// zookeeper-shell) hands to zkutil: errors only, on stderr, so ZooKeeper
// session chatter does not mix with output that scripts parse.
func Logger(env Env, component string) logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(Stderr(env))
	l.SetLevel(logrus.ErrorLevel)
	return l.WithField("component", component)
}

// NewApp builds the samsa command-line application from the commands build
// returns for env (tools.Commands: one subcommand per Kafka script; a
// package's tests pass just the commands they run). It fills env's unset
// streams and logger, and gives every command Kafka's usage-error handling.
// It never calls os.Exit; use Run for an exit code.
func NewApp(env Env, build func(Env) []*cli.Command) *cli.App {
	if env.Stdin == nil {
		env.Stdin = os.Stdin
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	if env.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		env.Logger = l
	}
	app := &cli.App{
		Name:                      "samsa",
		Usage:                     "a Kafka 2.8-compatible broker and its command-line tools",
		Reader:                    env.Stdin,
		Writer:                    env.Stdout,
		ErrWriter:                 env.Stderr,
		HideHelpCommand:           true,
		DisableSliceFlagSeparator: true,
		ExitErrHandler:            func(*cli.Context, error) {},
		Commands:                  build(env),
	}
	for _, cmd := range app.Commands {
		name := cmd.Name
		// No "help" subcommand (Kafka's tools have none): urfave/cli would
		// append its package-level help command to every command and write
		// into it on each run, a data race between concurrent Runs. --help
		// still prints the command's help.
		cmd.HideHelpCommand = true
		// Usage errors go to stderr with exit code 1, as Kafka's tools do,
		// and leave stdout clean for scripts.
		cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			fmt.Fprintf(env.Stderr, "%v\nRun 'samsa %s --help' for the options.\n", err, name)
			return ExitError{1}
		}
	}
	return app
}

// Run runs the application with args (args[0] is the program name) and
// returns the process exit code. Errors not yet printed are written to
// env.Stderr.
func Run(args []string, env Env, build func(Env) []*cli.Command) int {
	app := NewApp(env, build)
	err := app.Run(args)
	if err == nil {
		return 0
	}
	var ee ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		if msg := ec.Error(); msg != "" {
			fmt.Fprintln(Stderr(env), msg)
		}
		return ec.ExitCode()
	}
	fmt.Fprintln(Stderr(env), err)
	return 1
}
