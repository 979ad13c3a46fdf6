package zkshell

// zookeeper-shell: run one ZooKeeper command (Kafka's zookeeper-shell.sh,
// which wraps ZooKeeperMain), enough for scripts to inspect the cluster:
//
//	samsa zookeeper-shell localhost:2181[/chroot] ls <path>   → [a, b, c]
//	samsa zookeeper-shell localhost:2181[/chroot] get <path>  → the data
//
//	samsa zookeeper-shell localhost:2182 -zk-tls-config-file zk-tls.properties ls /
//
// Behaviour: only ls and get are supported; a missing znode prints
// "Node does not exist: <path>" on stderr and exits with 1. Unlike
// ZooKeeperMain there is no interactive mode and no connection chatter.
// -zk-tls-config-file <file> may stand anywhere after the program name, as
// in Kafka's ZooKeeperMainWithTlsSupportForKafka: the file's zookeeper.ssl.*
// keys switch the session to TLS; the JAAS Client section named in
// KAFKA_OPTS gives it its digest identity.

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

const usage = "USAGE: samsa zookeeper-shell host:port[/chroot] [-zk-tls-config-file file] ls|get path"

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:      "zookeeper-shell",
		Usage:     "run one ZooKeeper command: host:port[/chroot] ls|get path",
		ArgsUsage: "host:port[/chroot] [-zk-tls-config-file file] ls|get path",
		// ZooKeeperMain's own syntax: the TLS option may follow the host.
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			if a := c.Args().Slice(); len(a) == 1 && (a[0] == "--help" || a[0] == "-h") {
				fmt.Fprintln(env.Stdout, usage)
				return nil
			}
			args, tlsFile, err := splitTLSOption(c.Args().Slice())
			if err != nil {
				fmt.Fprintln(env.Stderr, err)
				return tool.ExitError{Code: 1}
			}
			if len(args) != 3 || (args[1] != "ls" && args[1] != "get") {
				fmt.Fprintln(env.Stderr, usage)
				return tool.ExitError{Code: 1}
			}
			sec := tool.ZKSecurity{Hint: "-zk-tls-config-file", SetACL: new(bool)}
			if tlsFile != "" {
				if sec.TLSProps, err = tool.ReadZKTLSFile(tlsFile); err != nil {
					fmt.Fprintln(env.Stderr, err)
					return tool.ExitError{Code: 1}
				}
			}
			zk, err := tool.ConnectZK(env, "zookeeper-shell", args[0], sec)
			if err != nil {
				fmt.Fprintln(env.Stderr, err)
				return tool.ExitError{Code: 1}
			}
			defer zk.Close()
			path := args[2]
			if args[1] == "ls" {
				var children []string
				children, err = zk.Children(path)
				if err == nil {
					sort.Strings(children)
					fmt.Fprintf(env.Stdout, "[%s]\n", strings.Join(children, ", "))
				}
			} else {
				var data []byte
				data, _, err = zk.Get(path)
				if err == nil {
					fmt.Fprintln(env.Stdout, string(data))
				}
			}
			if errors.Is(err, zkutil.ErrNoNode) {
				fmt.Fprintf(env.Stderr, "Node does not exist: %s\n", path)
				return tool.ExitError{Code: 1}
			}
			if err != nil {
				fmt.Fprintln(env.Stderr, err)
				return tool.ExitError{Code: 1}
			}
			return nil
		},
	}
}

// splitTLSOption removes -zk-tls-config-file <file> (or --zk-tls-config-file)
// from args, as ZooKeeperMainWithTlsSupportForKafka does.
func splitTLSOption(args []string) (rest []string, file string, err error) {
	for i := 0; i < len(args); i++ {
		if args[i] != "-zk-tls-config-file" && args[i] != "--zk-tls-config-file" {
			rest = append(rest, args[i])
			continue
		}
		if i == len(args)-1 {
			return nil, "", fmt.Errorf("No filename provided with option %s", args[i])
		}
		file = args[i+1]
		i++
	}
	return rest, file, nil
}
