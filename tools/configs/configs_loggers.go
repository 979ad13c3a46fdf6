package configs

// kafka-configs --entity-type broker-loggers (KIP-412, bootstrap only):
// describe lists each broker's loggers and levels, alter SETs (or DELETEs)
// logger levels with IncrementalAlterConfigs on the BROKER_LOGGER resource.
// Output is Kafka 2.8 ConfigCommand's.

import (
	"fmt"
	"io"
	"strings"

	"github.com/IBM/sarama"

	"samsa/tools/internal/tool"
)

// brokerLoggersType is Kafka's BrokerLoggerConfigType.
const brokerLoggersType = "broker-loggers"

// describeBrokerLoggersAdmin prints the loggers of one broker (Kafka
// requires the entity name).
func describeBrokerLoggersAdmin(admin sarama.ClusterAdmin, o *configsOpts, out io.Writer) error {
	entries, err := brokerLoggers(admin, o.entity.name)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Dynamic configs for broker-logger %s are:\n", o.entity.name)
	writeConfigEntryLines(out, entries, nil)
	return nil
}

// brokerLoggers describes the BROKER_LOGGER resource of broker name.
func brokerLoggers(admin sarama.ClusterAdmin, name string) ([]sarama.ConfigEntry, error) {
	res, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.BrokerLoggerResource, Name: name}}, sarama.DescribeConfigsOptions{IncludeSynonyms: true})
	if err != nil {
		return nil, err
	}
	var entries []sarama.ConfigEntry
	for _, r := range res {
		if r.ErrorCode != 0 {
			return nil, tool.Error(r.ErrorMsg)
		}
		for _, c := range r.Configs {
			entries = append(entries, c)
		}
	}
	return entries, nil
}

// alterBrokerLoggersAdmin checks, as Kafka, that every named logger exists
// ("Invalid broker logger(s): x"), then sets and deletes levels.
func alterBrokerLoggersAdmin(admin sarama.ClusterAdmin, o *configsOpts, out io.Writer) error {
	name := o.entity.name
	entries, err := brokerLoggers(admin, name)
	if err != nil {
		return err
	}
	valid := map[string]bool{}
	for _, e := range entries {
		valid[e.Name] = true
	}
	var invalid []string
	for _, k := range o.del {
		if !valid[k] {
			invalid = append(invalid, k)
		}
	}
	for _, k := range tool.SortedKeys(o.add) {
		if !valid[k] {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return tool.Errorf("Invalid broker logger(s): %s", strings.Join(invalid, ","))
	}
	ops := make(map[string]sarama.IncrementalAlterConfigsEntry, len(o.add)+len(o.del))
	for k, v := range o.add {
		ops[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}
	}
	for _, k := range o.del {
		empty := ""
		ops[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationDelete, Value: &empty}
	}
	if err := admin.IncrementalAlterConfig(sarama.BrokerLoggerResource, name, ops, false); err != nil {
		return err
	}
	fmt.Fprintf(out, "Completed updating config for broker-logger %s.\n", name)
	return nil
}
