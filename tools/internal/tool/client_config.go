package tool

// Java client properties (--command-config, --producer-property, ...) mapped
// onto a Sarama configuration, as the tools' Java clients would read them.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"samsa/config"
)

// ClientVersion is the protocol level the tools' Sarama clients speak.
var ClientVersion = sarama.V2_8_0_0

// SplitList splits a comma-separated option value (--bootstrap-server,
// --broker-list, --log-dirs, --delete-config), trimming spaces and dropping
// empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// NewSaramaConfig builds a Sarama configuration for a tool: Kafka 2.8
// protocol, the given client id, then the Kafka client properties from the
// properties file configFile (if any) and from props (command-line
// --producer-property / --consumer-property, which win). Properties that
// have no Sarama equivalent are ignored, as a Java client only warns about
// unknown ones; a known property with a bad value is an error.
func NewSaramaConfig(clientID, configFile string, props map[string]string) (*sarama.Config, error) {
	cfg := sarama.NewConfig()
	cfg.Version = ClientVersion
	cfg.ClientID = clientID
	cfg.Metadata.Retry.Max = 5
	cfg.Metadata.Retry.Backoff = 200 * time.Millisecond
	// Kafka's AdminClient waits up to request.timeout.ms (30 s) for
	// CreateTopics and DeleteTopics to complete.
	cfg.Admin.Timeout = 30 * time.Second
	cfg.Net.ReadTimeout = cfg.Admin.Timeout + 5*time.Second
	all := map[string]string{}
	if configFile != "" {
		fileProps, err := config.ReadPropertiesFile(configFile)
		if err != nil {
			return nil, err
		}
		all = fileProps
	}
	all = config.Merge(all, props)
	for _, k := range SortedKeys(all) {
		if err := applyClientProperty(cfg, k, strings.TrimSpace(all[k])); err != nil {
			return nil, fmt.Errorf("tools: invalid value %q for client property %s: %w", all[k], k, err)
		}
	}
	lingerOnlyWithFrequency(cfg)
	return cfg, nil
}

// lingerOnlyWithFrequency keeps Kafka's meaning of batch.size with linger.ms=0: send at once.
// Kafka's batch.size is only a ceiling; Sarama's Flush.Bytes is a threshold that holds a short
// batch back, and with no Flush.Frequency a short last batch is never sent, not even by Close
// (Sarama warns "messages may not get flushed"): a perf test or console producer would hang at
// its end. So a size threshold stays only when a linger time bounds the wait.
func lingerOnlyWithFrequency(cfg *sarama.Config) {
	if cfg.Producer.Flush.Frequency <= 0 {
		cfg.Producer.Flush.Bytes = 0
		cfg.Producer.Flush.Messages = 0
	}
}

// NewQueryClient connects a Sarama client for a tool that only reads or
// acts on existing topics: metadata requests never create a topic. cfg is
// the client's configuration, for requests sent to single brokers.
func NewQueryClient(servers, clientID, configFile string) (sarama.Client, *sarama.Config, error) {
	cfg, err := NewSaramaConfig(clientID, configFile, nil)
	if err != nil {
		return nil, nil, err
	}
	cfg.Metadata.AllowAutoTopicCreation = false
	client, err := sarama.NewClient(SplitList(servers), cfg)
	if err != nil {
		return nil, nil, err
	}
	return client, cfg, nil
}

// applyClientProperty maps one Java client property onto cfg.
func applyClientProperty(cfg *sarama.Config, key, v string) error {
	ms := func() (time.Duration, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		return time.Duration(n) * time.Millisecond, err
	}
	num := func() (int, error) { return strconv.Atoi(v) }
	var err error
	switch key {
	case "client.id":
		cfg.ClientID = v
	case "request.timeout.ms":
		var d time.Duration
		d, err = ms()
		cfg.Net.ReadTimeout, cfg.Net.WriteTimeout, cfg.Admin.Timeout = d+5*time.Second, d, d
	case "acks":
		var acks sarama.RequiredAcks
		acks, err = parseAcks(v)
		cfg.Producer.RequiredAcks = acks
	case "compression.type":
		err = cfg.Producer.Compression.UnmarshalText([]byte(v))
	case "linger.ms":
		cfg.Producer.Flush.Frequency, err = ms()
	case "batch.size":
		cfg.Producer.Flush.Bytes, err = num()
	case "max.request.size":
		var n int
		n, err = num()
		cfg.Producer.MaxMessageBytes = n
	case "retries":
		cfg.Producer.Retry.Max, err = num()
	case "retry.backoff.ms":
		var d time.Duration
		d, err = ms()
		cfg.Producer.Retry.Backoff, cfg.Consumer.Retry.Backoff, cfg.Metadata.Retry.Backoff = d, d, d
	case "enable.idempotence":
		cfg.Producer.Idempotent = strings.EqualFold(v, "true")
		if cfg.Producer.Idempotent {
			cfg.Net.MaxOpenRequests = 1
			cfg.Producer.RequiredAcks = sarama.WaitForAll
		}
	case "auto.offset.reset":
		switch v {
		case "earliest":
			cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
		case "latest":
			cfg.Consumer.Offsets.Initial = sarama.OffsetNewest
		default:
			err = fmt.Errorf("expected earliest or latest")
		}
	case "fetch.min.bytes":
		var n int
		n, err = num()
		cfg.Consumer.Fetch.Min = int32(n)
	case "fetch.max.wait.ms":
		cfg.Consumer.MaxWaitTime, err = ms()
	case "max.partition.fetch.bytes":
		var n int
		n, err = num()
		cfg.Consumer.Fetch.Default = int32(n)
	case "session.timeout.ms":
		cfg.Consumer.Group.Session.Timeout, err = ms()
	case "heartbeat.interval.ms":
		cfg.Consumer.Group.Heartbeat.Interval, err = ms()
	case "max.poll.interval.ms":
		cfg.Consumer.Group.Rebalance.Timeout, err = ms()
	case "enable.auto.commit":
		cfg.Consumer.Offsets.AutoCommit.Enable = strings.EqualFold(v, "true")
	case "auto.commit.interval.ms":
		cfg.Consumer.Offsets.AutoCommit.Interval, err = ms()
	case "isolation.level":
		switch v {
		case "read_uncommitted":
			cfg.Consumer.IsolationLevel = sarama.ReadUncommitted
		case "read_committed":
			cfg.Consumer.IsolationLevel = sarama.ReadCommitted
		default:
			err = fmt.Errorf("expected read_uncommitted or read_committed")
		}
	case "metadata.max.age.ms":
		cfg.Metadata.RefreshFrequency, err = ms()
	}
	return err
}

// parseAcks parses acks / --request-required-acks: all, -1, 0 or 1.
func parseAcks(v string) (sarama.RequiredAcks, error) {
	switch strings.TrimSpace(v) {
	case "all", "-1":
		return sarama.WaitForAll, nil
	case "0":
		return sarama.NoResponse, nil
	case "1":
		return sarama.WaitForLocal, nil
	}
	return 0, fmt.Errorf("expected all, -1, 0 or 1")
}

// ParsePropertyArgs parses repeated "key=value" --property style arguments.
func ParsePropertyArgs(args []string) (map[string]string, error) {
	out := make(map[string]string, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, Errorf("Invalid command line properties: %s", a)
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}
