package zkshell

// zookeeper-shell: run one ZooKeeper command (Kafka's zookeeper-shell.sh,
// which wraps ZooKeeperMain), enough for scripts to inspect the cluster:
//
//	samsa zookeeper-shell localhost:2181[/chroot] ls <path>   → [a, b, c]
//	samsa zookeeper-shell localhost:2181[/chroot] get <path>  → the data
//
// Behaviour: only ls and get are supported; a missing znode prints
// "Node does not exist: <path>" on stderr and exits with 1. Unlike
// ZooKeeperMain there is no interactive mode and no connection chatter.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:      "zookeeper-shell",
		Usage:     "run one ZooKeeper command: host:port[/chroot] ls|get path",
		ArgsUsage: "host:port[/chroot] ls|get path",
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) != 3 || (args[1] != "ls" && args[1] != "get") {
				fmt.Fprintln(env.Stderr, "USAGE: samsa zookeeper-shell host:port[/chroot] ls|get path")
				return tool.ExitError{Code: 1}
			}
			ctx, cancel := context.WithTimeout(context.Background(), tool.ZKTimeout)
			defer cancel()
			zk, err := zkutil.Connect(ctx, zkutil.Config{Connect: args[0], SessionTimeout: tool.ZKTimeout,
				ConnectionTimeout: tool.ZKTimeout, Logger: tool.Logger(env, "zookeeper-shell")})
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
