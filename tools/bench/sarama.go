package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The Sarama side runs Samsa's own Kafka perf tools (tools/perf/producer_perf.go,
// tools/perf/consumer_perf.go) as child processes and parses Kafka's output
// formats.

var producerTotal = regexp.MustCompile(`(\d+) records sent, ([0-9.]+) records/sec \(([0-9.]+) MB/sec\)`)

// saramaProducerArgs returns the kafka-producer-perf-test arguments.
func saramaProducerArgs(bootstrap, topic string, n, size int, acks string) []string {
	return []string{"kafka-producer-perf-test", "--topic", topic, "--num-records", strconv.Itoa(n),
		"--record-size", strconv.Itoa(size), "--throughput", "-1",
		"--producer-props", "bootstrap.servers=" + bootstrap, "acks=" + acks}
}

// saramaConsumerArgs returns the kafka-consumer-perf-test arguments.
func saramaConsumerArgs(bootstrap, topic string, n int) []string {
	return []string{"kafka-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic,
		"--messages", strconv.Itoa(n), "--timeout", "10000", "--hide-header"}
}

func runTool(ctx context.Context, bin string, args []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("bench: %s: %w: %s", args[0], err, lastLine(errb.String()))
	}
	if s := strings.TrimSpace(errb.String()); s != "" && strings.Contains(strings.ToLower(s), "error") {
		return out.String(), fmt.Errorf("bench: %s reported: %s", args[0], lastLine(s))
	}
	return out.String(), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// saramaProduce runs the producer perf tool and returns its total line's
// rates.
func saramaProduce(ctx context.Context, bin, bootstrap, topic string, n, size int, acks string, timeout time.Duration) (throughput, error) {
	out, err := runTool(ctx, bin, saramaProducerArgs(bootstrap, topic, n, size, acks), timeout)
	if err != nil {
		return throughput{}, err
	}
	return parseProducerTotal(out, n)
}

// parseProducerTotal reads the rates of the last total line of
// kafka-producer-perf-test's output and checks that n records were sent.
func parseProducerTotal(out string, n int) (throughput, error) {
	m := producerTotal.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return throughput{}, fmt.Errorf("bench: no total line in producer output %q", lastLine(out))
	}
	last := m[len(m)-1]
	if sent, _ := strconv.Atoi(last[1]); sent != n {
		return throughput{}, fmt.Errorf("bench: producer sent %s of %d records", last[1], n)
	}
	recs, _ := strconv.ParseFloat(last[2], 64)
	mib, _ := strconv.ParseFloat(last[3], 64)
	return throughput{Records: recs, MiB: mib}, nil
}

// saramaConsume runs the consumer perf tool and returns fetch.MB.sec and
// fetch.nMsg.sec of its CSV line.
func saramaConsume(ctx context.Context, bin, bootstrap, topic string, n int, timeout time.Duration) (throughput, error) {
	out, err := runTool(ctx, bin, saramaConsumerArgs(bootstrap, topic, n), timeout)
	if err != nil {
		return throughput{}, err
	}
	return parseConsumerLine(out, n)
}

// parseConsumerLine reads fetch.MB.sec and fetch.nMsg.sec from the last
// CSV line of kafka-consumer-perf-test's output and checks that at least n
// records were read.
func parseConsumerLine(out string, n int) (throughput, error) {
	line := lastLine(out)
	f := strings.Split(line, ", ")
	if len(f) != 10 {
		return throughput{}, fmt.Errorf("bench: consumer output %q", line)
	}
	if got, _ := strconv.Atoi(f[4]); got < n {
		return throughput{}, fmt.Errorf("bench: consumer read %s of %d records", f[4], n)
	}
	mib, _ := strconv.ParseFloat(f[8], 64)
	recs, _ := strconv.ParseFloat(f[9], 64)
	return throughput{Records: recs, MiB: mib}, nil
}
