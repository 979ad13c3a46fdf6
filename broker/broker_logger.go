package broker

// BROKER_LOGGER config resources (KIP-412): DescribeConfigs lists the
// broker's loggers with their levels, IncrementalAlterConfigs changes them
// at run time. Samsa has one logger, log4j's "root": every component logs
// through it with a "component" field, so that is the only name listed and
// the only one that can be set. Levels use log4j's names.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rootLoggerName is log4j's name of the root logger (Log4jController.ROOT_LOGGER).
const rootLoggerName = "root"

// log4jLevels maps log4j's level names (Kafka's LogLevelConfig) to logrus.
var log4jLevels = map[string]logrus.Level{
	"FATAL": logrus.FatalLevel,
	"ERROR": logrus.ErrorLevel,
	"WARN":  logrus.WarnLevel,
	"INFO":  logrus.InfoLevel,
	"DEBUG": logrus.DebugLevel,
	"TRACE": logrus.TraceLevel,
}

// rootLogger returns the logrus logger behind the broker's FieldLogger, or
// nil when it is another implementation.
func (b *Broker) rootLogger() *logrus.Logger {
	switch l := b.opts.Logger.(type) {
	case *logrus.Logger:
		return l
	case *logrus.Entry:
		return l.Logger
	}
	return nil
}

// checkLoggerResource validates a BROKER_LOGGER resource name: this
// broker's id (Kafka: INVALID_REQUEST for an empty or another id).
func (b *Broker) checkLoggerResource(name string) error {
	if name == "" {
		return fmt.Errorf("%w: broker id must not be empty", errInvalidRequest)
	}
	if name != strconv.Itoa(int(b.ID())) {
		return fmt.Errorf("%w: unexpected broker id, expected %d but received %s", errInvalidRequest, b.ID(), name)
	}
	return nil
}

// describeBrokerLoggers lists the root logger and its level
// (DYNAMIC_BROKER_LOGGER_CONFIG, not read-only, no synonyms).
func (b *Broker) describeBrokerLoggers(name string) ([]describedConfig, error) {
	if err := b.checkLoggerResource(name); err != nil {
		return nil, err
	}
	level := "INFO"
	if l := b.rootLogger(); l != nil {
		level = strings.ToUpper(l.GetLevel().String())
		if level == "WARNING" {
			level = "WARN"
		}
		if level == "PANIC" {
			level = "FATAL"
		}
	}
	return []describedConfig{{name: rootLoggerName, value: level, source: kmsg.ConfigSourceDynamicBrokerLoggerConfig}}, nil
}

// incrementalAlterBrokerLogger applies SET of a logger's level; the checks
// are Kafka's validateLogLevelConfigs: unknown loggers and levels are
// INVALID_CONFIG, DELETE of the root logger and APPEND/SUBTRACT are
// INVALID_REQUEST.
func (b *Broker) incrementalAlterBrokerLogger(res kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if err := b.checkLoggerResource(res.ResourceName); err != nil {
		return err
	}
	var set *logrus.Level
	for _, c := range res.Configs {
		if c.Name != rootLoggerName {
			return fmt.Errorf("%w: logger %s does not exist", errInvalidConfig, c.Name)
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			v := ""
			if c.Value != nil {
				v = *c.Value
			}
			l, ok := log4jLevels[v]
			if !ok {
				return fmt.Errorf("%w: cannot set the log level of %s to %s as it is not a supported log level; valid log levels are FATAL, ERROR, WARN, INFO, DEBUG, TRACE",
					errInvalidConfig, c.Name, v)
			}
			set = &l
		case kmsg.IncrementalAlterConfigOpDelete:
			return fmt.Errorf("%w: removing the log level of the %s logger is not allowed", errInvalidRequest, rootLoggerName)
		default:
			return fmt.Errorf("%w: %v operation is not allowed for the BROKER_LOGGER resource", errInvalidRequest, c.Op)
		}
	}
	if set == nil || validateOnly {
		return nil
	}
	l := b.rootLogger()
	if l == nil {
		return fmt.Errorf("%w: the broker's logger cannot change its level", errInvalidConfig)
	}
	l.SetLevel(*set)
	b.log.WithField("level", set.String()).Info("root log level changed (IncrementalAlterConfigs)")
	return nil
}
