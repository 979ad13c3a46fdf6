package main

import (
	"io"
	"runtime/debug"
	"testing"

	"github.com/sirupsen/logrus"
)

func TestToolServerGCDefaults(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	if tuneServerGC([]string{"samsa", "kafka-topics", "--list"}, getenv, log) {
		t.Fatal("applied to a tool other than kafka-server-start")
	}
	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		env = map[string]string{k: "200"}
		if tuneServerGC([]string{"samsa", "kafka-server-start", "x.properties"}, getenv, log) {
			t.Fatalf("applied although %s is set", k)
		}
	}
	env = map[string]string{}
	if !tuneServerGC([]string{"samsa", "kafka-server-start", "x.properties"}, getenv, log) {
		t.Fatal("not applied to kafka-server-start")
	}
	if got := debug.SetGCPercent(100); got != serverGCPercent {
		t.Fatalf("GOGC = %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != serverMemoryLimit {
		t.Fatalf("GOMEMLIMIT = %d", got)
	}
}
