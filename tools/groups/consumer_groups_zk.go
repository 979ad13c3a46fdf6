package groups

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

// runConsumerGroupsZK is kafka-consumer-groups --zookeeper: Kafka 1.x's
// ZkConsumerGroupService for old consumers, --list and --describe.
func runConsumerGroupsZK(c *cli.Context, env tool.Env) error {
	if !c.Bool("list") && !c.Bool("describe") {
		return tool.Error("Option [zookeeper] can only be used with options [list] and [describe]")
	}
	groups := c.StringSlice("group")
	if c.Bool("describe") && len(groups) == 0 {
		return tool.Error("Option [describe] takes the option: [group]")
	}
	fmt.Fprintln(env.Stderr, "Note: This will only show information about consumers that use ZooKeeper (not those using the Java consumer API).")
	fmt.Fprintln(env.Stderr)
	ctx, cancel := context.WithTimeout(context.Background(), tool.ZKTimeout)
	defer cancel()
	zk, err := zkutil.Connect(ctx, zkutil.Config{Connect: c.String("zookeeper"), SessionTimeout: tool.ZKTimeout,
		ConnectionTimeout: tool.ZKTimeout, Logger: tool.Logger(env, "kafka-consumer-groups")})
	if err != nil {
		return err
	}
	defer zk.Close()
	if c.Bool("list") {
		all, err := zk.GetConsumerGroups()
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		for _, g := range all {
			fmt.Fprintln(env.Stdout, g)
		}
		return nil
	}
	client, err := saramaClientFromZK(zk)
	if err != nil {
		return err
	}
	defer client.Close()
	for _, g := range groups {
		if err := describeZKGroup(env, zk, client, g); err != nil {
			return err
		}
	}
	return nil
}

// saramaClientFromZK connects a Sarama client to the brokers registered
// in ZooKeeper.
func saramaClientFromZK(zk *zkutil.Client) (sarama.Client, error) {
	brokers, err := zk.GetAllBrokers()
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, id := range sortedPartitionKeys(brokers) {
		for _, ep := range brokers[id].Registration.Endpoints {
			if ep.SecurityProtocol == "PLAINTEXT" {
				addrs = append(addrs, net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))))
				break
			}
		}
	}
	if len(addrs) == 0 {
		return nil, tool.Error("No live brokers with a PLAINTEXT endpoint are registered in ZooKeeper.")
	}
	cfg, err := tool.NewSaramaConfig("consumer-groups", "", nil)
	if err != nil {
		return nil, err
	}
	cfg.Metadata.AllowAutoTopicCreation = false
	return sarama.NewClient(addrs, cfg)
}

// zkChildren lists a znode's children, sorted; a missing znode has none.
func zkChildren(zk *zkutil.Client, path string) ([]string, error) {
	names, err := zk.Children(path)
	if errors.Is(err, zkutil.ErrNoNode) {
		return nil, nil
	}
	sort.Strings(names)
	return names, err
}

// describeZKGroup prints Kafka 1.x's old-consumer describe table for one
// group: every partition of the topics the group has offsets or owners for.
func describeZKGroup(env tool.Env, zk *zkutil.Client, client sarama.Client, group string) error {
	if ok, _, err := zk.Exists(zkutil.ConsumerGroupPath(group)); err != nil || !ok {
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "\nError: Consumer group '%s' does not exist.\n", group)
		return nil
	}
	ids, err := zkChildren(zk, zkutil.ConsumerIDsPath(group))
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fmt.Fprintf(env.Stderr, "Consumer group '%s' has no active members.\n", group)
	}
	topicSet := map[string]bool{}
	for _, dir := range []string{tool.GroupOffsetsDir(group), path.Dir(zkutil.ConsumerOwnersPath(group, "t"))} {
		names, err := zkChildren(zk, dir)
		if err != nil {
			return err
		}
		for _, t := range names {
			topicSet[t] = true
		}
	}
	if len(topicSet) == 0 {
		fmt.Fprintf(env.Stderr, "No topic available for consumer group provided\n")
		return nil
	}
	const format = "%-30s %-10s %-15s %-15s %-10s %-50s"
	var b strings.Builder
	b.WriteString("\n" + fmt.Sprintf(format, "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "OWNER") + "\n")
	for _, t := range groupSortedKeys(topicSet) {
		parts, err := client.Partitions(t)
		if err != nil {
			return err
		}
		offsets, err := zk.GetConsumerOffsets(group, t)
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		for _, p := range parts {
			cur, end, lag, owner := missingColumn, missingColumn, missingColumn, missingColumn
			off, hasOff := offsets[p]
			if hasOff {
				cur = strconv.FormatInt(off, 10)
			}
			if e, err := client.GetOffset(t, p, sarama.OffsetNewest); err == nil {
				end = strconv.FormatInt(e, 10)
				if hasOff {
					lag = strconv.FormatInt(max(e-off, 0), 10)
				}
			}
			if o, err := zk.GetPartitionOwner(group, t, p); err == nil {
				owner = o
			}
			b.WriteString(fmt.Sprintf(format, t, strconv.Itoa(int(p)), cur, end, lag, owner) + "\n")
		}
	}
	fmt.Fprint(env.Stdout, b.String())
	return nil
}
