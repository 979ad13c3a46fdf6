package serverstart

// kafka-server-start: run one broker (Kafka's kafka.Kafka main).
//
// Behaviour:
//   - arguments as Kafka: server.properties [--override key=value]...
//     (also --override=key=value); the file and overrides go through
//     config.LoadBroker, unknown keys are logged at WARN, invalid values stop
//     start-up with every problem listed;
//   - SIGTERM or SIGINT (or the end of tool.Env.Context) runs the broker's ordered
//     Shutdown with a deadline (shutdownDeadline); a second signal exits at
//     once with code 1;
//   - log.format (text|json) and log.level from the config are applied to
//     the process logger; with SAMSA_LOG_FILE set (kafka-server-start.sh
//     -daemon sets $LOG_DIR/server.log) log lines also go to that file,
//     as Kafka's log4j writes both the console and server.log;
//   - exit code 0 after a clean shutdown, 1 when start-up or shutdown fails.

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"samsa/broker"
	"samsa/config"
	"samsa/tools/internal/tool"
)

const serverStartUsage = "USAGE: samsa kafka-server-start server.properties [--override property=value]*"

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:            "kafka-server-start",
		Usage:           "run a broker: server.properties [--override property=value]*",
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			return runServerStart(c.Args().Slice(), env)
		},
	}
}

// parseServerArgs splits Kafka's server arguments into the properties file
// and the override strings.
func parseServerArgs(args []string) (string, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return "", nil, tool.Error(serverStartUsage)
	}
	path := args[0]
	var overrides []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--override":
			if i+1 >= len(args) {
				return "", nil, tool.Error("Option override requires an argument\n" + serverStartUsage)
			}
			overrides = append(overrides, args[i+1])
			i++
		case strings.HasPrefix(a, "--override="):
			overrides = append(overrides, strings.TrimPrefix(a, "--override="))
		default:
			return "", nil, tool.Errorf("Found non argument parameters: %s\n%s", a, serverStartUsage)
		}
	}
	return path, overrides, nil
}

// shutdownDeadline bounds the ordered shutdown: long enough for controlled
// shutdown's retries, at least 30 s.
func shutdownDeadline(cfg *config.Broker) time.Duration {
	d := time.Duration(cfg.ControlledShutdownMaxRetries)*time.Duration(cfg.ControlledShutdownRetryBackoffMs)*time.Millisecond + 15*time.Second
	if d < 30*time.Second {
		d = 30 * time.Second
	}
	return d
}

func runServerStart(args []string, env tool.Env) error {
	path, overrides, err := parseServerArgs(args)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return tool.ExitError{Code: 1}
	}
	log := env.Logger.WithField("component", "kafka-server-start")
	cfg, warnings, err := config.LoadBroker(path, overrides)
	for _, w := range warnings {
		log.Warn(string(w))
	}
	if err != nil {
		log.WithError(err).Error("invalid configuration")
		fmt.Fprintln(env.Stderr, err)
		return tool.ExitError{Code: 1}
	}
	closeLog, err := applyLogSettings(env, cfg)
	if err != nil {
		log.WithError(err).Error("invalid log settings")
		fmt.Fprintln(env.Stderr, err)
		return tool.ExitError{Code: 1}
	}
	defer closeLog()
	parent := env.Context
	if parent == nil {
		parent = context.Background()
	}
	stopCtx, stop := context.WithCancel(parent)
	defer stop()
	// A broker that can no longer serve (every log dir failed) asks to be
	// stopped: shut down in order, then exit with status 1, as Kafka halts.
	var fatal atomic.Pointer[error]
	onFatal := func(err error) {
		fatal.Store(&err)
		log.WithError(err).Error("fatal broker error, shutting down")
		stop()
	}
	b, err := broker.New(cfg, broker.Options{Logger: env.Logger, Registry: metrics.NewRegistry(), OnFatal: onFatal})
	if err != nil {
		log.WithError(err).Error("cannot create the broker")
		return tool.ExitError{Code: 1}
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			log.WithField("signal", s.String()).Info("shutting down")
			stop()
		case <-stopCtx.Done():
		}
	}()

	if err := b.Start(stopCtx); err != nil {
		log.WithError(err).Error("fatal error during broker start-up, prepare to shutdown")
		return tool.ExitError{Code: 1}
	}
	log.WithFields(logrus.Fields{"broker": b.ID(), "listeners": listenerNames(cfg)}).Info("started")
	<-stopCtx.Done()

	deadline := shutdownDeadline(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.Shutdown(ctx) }()
	select {
	case err = <-done:
	case s := <-sigs:
		log.WithField("signal", s.String()).Error("second signal, exiting without finishing shutdown")
		return tool.ExitError{Code: 1}
	}
	if err != nil {
		log.WithError(err).Error("shutdown did not complete cleanly")
		return tool.ExitError{Code: 1}
	}
	if f := fatal.Load(); f != nil {
		log.WithError(*f).WithField("broker", b.ID()).Error("shut down after a fatal error")
		return tool.ExitError{Code: 1}
	}
	log.WithField("broker", b.ID()).Info("shut down completed")
	return nil
}

// applyLogSettings applies log.format, log.level and SAMSA_LOG_FILE to the
// process logger (when it is a *logrus.Logger) and returns a function that
// closes the log file.
func applyLogSettings(env tool.Env, cfg *config.Broker) (func(), error) {
	l, ok := env.Logger.(*logrus.Logger)
	if !ok {
		return func() {}, nil
	}
	if cfg.LogFormat == "json" {
		l.SetFormatter(&logrus.JSONFormatter{TimestampFormat: "2006-01-02T15:04:05.000Z07:00"})
	}
	if cfg.LogLevel != "" {
		lvl, err := logrus.ParseLevel(cfg.LogLevel)
		if err != nil {
			return nil, fmt.Errorf("log.level: %w", err)
		}
		l.SetLevel(lvl)
	}
	path := os.Getenv("SAMSA_LOG_FILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	orig := l.Out
	l.SetOutput(io.MultiWriter(orig, f))
	return func() {
		l.SetOutput(orig)
		_ = f.Close()
	}, nil
}

func listenerNames(cfg *config.Broker) string {
	var parts []string
	for _, l := range cfg.Listeners() {
		parts = append(parts, l.String())
	}
	return strings.Join(parts, ",")
}
