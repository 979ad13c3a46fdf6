package main

import (
	"os"

	"github.com/sirupsen/logrus"

	"samsa/tools"
)

func main() {
	logger := logrus.New()
	logger.SetOutput(os.Stderr)
	logger.SetFormatter(&logrus.TextFormatter{FullTimestamp: true, TimestampFormat: "2006-01-02 15:04:05.000"})
	logger.SetLevel(logrus.InfoLevel)
	if s := os.Getenv("SAMSA_LOG_LEVEL"); s != "" {
		if lvl, err := logrus.ParseLevel(s); err == nil {
			logger.SetLevel(lvl)
		} else {
			logger.Warnf("ignoring SAMSA_LOG_LEVEL=%q: %v", s, err)
		}
	}
	if addr := os.Getenv("SAMSA_PPROF_ADDR"); addr != "" {
		startPprof(addr, logger)
	}
	os.Exit(tools.Run(os.Args, tools.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Logger: logger}))
}
