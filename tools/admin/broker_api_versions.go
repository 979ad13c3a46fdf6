package admin

// kafka-broker-api-versions: Kafka 2.8's BrokerApiVersionsCommand: ask every
// broker of the cluster for its ApiVersions and print them as Kafka's
// NodeApiVersions.toString(true) does:
//
//	host:port (id: 1 rack: null) -> (
//		Produce(0): 0 to 9 [usable: 9],
//		...
//		LeaderAndIsr(4): UNSUPPORTED,
//		...
//	)
//
// Behaviour:
//   - "usable" is computed against Kafka 2.8's client (its ApiKeys table
//     below), so the output is what a 2.8 client would print;
//   - APIs a ZooKeeper-mode 2.8 broker has and this broker lacks print
//     UNSUPPORTED; keys unknown to 2.8 print UNKNOWN(n);
//   - brokers print in id order (Kafka prints them in hash-map order);
//     a broker that does not answer prints "-> ERROR: <error>".

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
)

// kafkaAPI is one entry of Kafka 2.8's ApiKeys enum.
type kafkaAPI struct {
	key      int16
	name     string
	min, max int16
	zkBroker bool // part of ApiKeys.zkBrokerApis()
}

// kafka28APIs is Kafka 2.8's ApiKeys (from clients/src/main/resources/
// common/message/*Request.json at tag 2.8.2: apiKey, name, validVersions,
// listeners contains "zkBroker").
var kafka28APIs = []kafkaAPI{
	{0, "Produce", 0, 9, true},
	{1, "Fetch", 0, 12, true},
	{2, "ListOffsets", 0, 6, true},
	{3, "Metadata", 0, 11, true},
	{4, "LeaderAndIsr", 0, 5, true},
	{5, "StopReplica", 0, 3, true},
	{6, "UpdateMetadata", 0, 7, true},
	{7, "ControlledShutdown", 0, 3, true},
	{8, "OffsetCommit", 0, 8, true},
	{9, "OffsetFetch", 0, 7, true},
	{10, "FindCoordinator", 0, 3, true},
	{11, "JoinGroup", 0, 7, true},
	{12, "Heartbeat", 0, 4, true},
	{13, "LeaveGroup", 0, 4, true},
	{14, "SyncGroup", 0, 5, true},
	{15, "DescribeGroups", 0, 5, true},
	{16, "ListGroups", 0, 4, true},
	{17, "SaslHandshake", 0, 1, true},
	{18, "ApiVersions", 0, 3, true},
	{19, "CreateTopics", 0, 7, true},
	{20, "DeleteTopics", 0, 6, true},
	{21, "DeleteRecords", 0, 2, true},
	{22, "InitProducerId", 0, 4, true},
	{23, "OffsetForLeaderEpoch", 0, 4, true},
	{24, "AddPartitionsToTxn", 0, 3, true},
	{25, "AddOffsetsToTxn", 0, 3, true},
	{26, "EndTxn", 0, 3, true},
	{27, "WriteTxnMarkers", 0, 1, true},
	{28, "TxnOffsetCommit", 0, 3, true},
	{29, "DescribeAcls", 0, 2, true},
	{30, "CreateAcls", 0, 2, true},
	{31, "DeleteAcls", 0, 2, true},
	{32, "DescribeConfigs", 0, 4, true},
	{33, "AlterConfigs", 0, 2, true},
	{34, "AlterReplicaLogDirs", 0, 2, true},
	{35, "DescribeLogDirs", 0, 2, true},
	{36, "SaslAuthenticate", 0, 2, true},
	{37, "CreatePartitions", 0, 3, true},
	{38, "CreateDelegationToken", 0, 2, true},
	{39, "RenewDelegationToken", 0, 2, true},
	{40, "ExpireDelegationToken", 0, 2, true},
	{41, "DescribeDelegationToken", 0, 2, true},
	{42, "DeleteGroups", 0, 2, true},
	{43, "ElectLeaders", 0, 2, true},
	{44, "IncrementalAlterConfigs", 0, 1, true},
	{45, "AlterPartitionReassignments", 0, 0, true},
	{46, "ListPartitionReassignments", 0, 0, true},
	{47, "OffsetDelete", 0, 0, true},
	{48, "DescribeClientQuotas", 0, 1, true},
	{49, "AlterClientQuotas", 0, 1, true},
	{50, "DescribeUserScramCredentials", 0, 0, true},
	{51, "AlterUserScramCredentials", 0, 0, true},
	{52, "Vote", 0, 0, false},
	{53, "BeginQuorumEpoch", 0, 0, false},
	{54, "EndQuorumEpoch", 0, 0, false},
	{55, "DescribeQuorum", 0, 0, false},
	{56, "AlterIsr", 0, 0, true},
	{57, "UpdateFeatures", 0, 0, true},
	{58, "Envelope", 0, 0, false},
	{59, "FetchSnapshot", 0, 0, false},
	{60, "DescribeCluster", 0, 0, true},
	{61, "DescribeProducers", 0, 0, true},
	{62, "BrokerRegistration", 0, 0, false},
	{63, "BrokerHeartbeat", 0, 0, false},
	{64, "UnregisterBroker", 0, 0, false},
}

func kafka28API(key int16) (kafkaAPI, bool) {
	for _, a := range kafka28APIs {
		if a.key == key {
			return a, true
		}
	}
	return kafkaAPI{}, false
}

func BrokerAPIVersionsCommand(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-broker-api-versions",
		Usage: "retrieve broker version information",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "REQUIRED: the server to connect to"},
			&cli.StringFlag{Name: "command-config", Usage: "a property file containing configs to be passed to Admin Client"},
		},
		Action: tool.ErrorExitAction(env, runBrokerAPIVersions),
	}
}

func runBrokerAPIVersions(c *cli.Context, env tool.Env) error {
	servers := c.String("bootstrap-server")
	if servers == "" {
		return tool.Error(`Missing required argument "[bootstrap-server]"`)
	}
	client, cfg, err := tool.NewQueryClient(servers, "broker-api-versions", c.String("command-config"))
	if err != nil {
		return err
	}
	defer client.Close()
	brokers := client.Brokers()
	sort.Slice(brokers, func(i, j int) bool { return brokers[i].ID() < brokers[j].ID() })
	for _, b := range brokers {
		node := nodeString(b)
		keys, err := brokerAPIVersions(b, cfg)
		if err != nil {
			fmt.Fprintf(env.Stdout, "%s -> ERROR: %v\n", node, err)
			continue
		}
		fmt.Fprintf(env.Stdout, "%s -> ", node)
		writeNodeAPIVersions(env.Stdout, keys)
		fmt.Fprintln(env.Stdout)
	}
	return nil
}

// nodeString is Kafka's Node.toString.
func nodeString(b *sarama.Broker) string {
	rack := b.Rack()
	if rack == "" {
		rack = "null"
	}
	return fmt.Sprintf("%s (id: %d rack: %s)", b.Addr(), b.ID(), rack)
}

func brokerAPIVersions(b *sarama.Broker, cfg *sarama.Config) ([]sarama.ApiVersionsResponseKey, error) {
	if ok, _ := b.Connected(); !ok {
		if err := b.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
			return nil, err
		}
	}
	resp, err := b.ApiVersions(&sarama.ApiVersionsRequest{Version: 3, ClientSoftwareName: "samsa-tools", ClientSoftwareVersion: "2.8"})
	if err != nil {
		return nil, err
	}
	if resp.ErrorCode != 0 {
		return nil, sarama.KError(resp.ErrorCode)
	}
	return resp.ApiKeys, nil
}

// writeNodeAPIVersions is NodeApiVersions.toString(true).
func writeNodeAPIVersions(w io.Writer, keys []sarama.ApiVersionsResponseKey) {
	text := map[int16]string{}
	for _, k := range keys {
		text[k.ApiKey] = apiVersionText(k)
	}
	for _, a := range kafka28APIs {
		if _, ok := text[a.key]; !ok && a.zkBroker {
			text[a.key] = fmt.Sprintf("%s(%d): UNSUPPORTED", a.name, a.key)
		}
	}
	ids := make([]int16, 0, len(text))
	for id := range text {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	lines := make([]string, len(ids))
	for i, id := range ids {
		lines[i] = text[id]
	}
	fmt.Fprintf(w, "(\n\t%s\n)", strings.Join(lines, ",\n\t"))
}

func apiVersionText(k sarama.ApiVersionsResponseKey) string {
	var sb strings.Builder
	a, known := kafka28API(k.ApiKey)
	if known {
		fmt.Fprintf(&sb, "%s(%d): ", a.name, a.key)
	} else {
		fmt.Fprintf(&sb, "UNKNOWN(%d): ", k.ApiKey)
	}
	if k.MinVersion == k.MaxVersion {
		fmt.Fprintf(&sb, "%d", k.MinVersion)
	} else {
		fmt.Fprintf(&sb, "%d to %d", k.MinVersion, k.MaxVersion)
	}
	if known {
		switch {
		case a.max < k.MinVersion:
			sb.WriteString(" [unusable: node too new]")
		case k.MaxVersion < a.min:
			sb.WriteString(" [unusable: node too old]")
		default:
			fmt.Fprintf(&sb, " [usable: %d]", min(a.max, k.MaxVersion))
		}
	}
	return sb.String()
}
