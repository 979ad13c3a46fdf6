// Package tool is what every samsa subcommand shares: the process
// environment (Env), the application builder (NewApp, Run: Kafka's usage
// errors, exit codes, no "help" subcommand), the errors worded as Kafka's
// tools word them (Error, Errorf, CommandFailure, JavaException,
// ExitError), Java client properties → Sarama (NewSaramaConfig,
// NewQueryClient, ParsePropertyArgs), Kafka 2.8's error class names and
// messages (JavaExceptionClass, JavaExceptionText), Java formats
// (JavaDateLayout for SimpleDateFormat patterns, JavaDouble, JavaString),
// Kafka's ThroughputThrottler, and the race-free --help flag.
//
// Owns: app.go, client_config.go, kafka_errors.go, java.go, java_date.go,
// throttle.go, partition.go, text.go, zk.go, help_flag.go. It holds no
// command; the command families (tools/topics, tools/console, ...) import
// it and tools assembles them.
//
// Concurrency: NewApp and Run may be called from several goroutines with
// separate Envs. No package-level mutable state except urfave/cli's help
// flag, replaced once in init (help_flag.go).
package tool
