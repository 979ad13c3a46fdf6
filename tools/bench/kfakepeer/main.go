package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	portsFlag := flag.String("ports", "24092", "comma-separated listener ports, one broker per port")
	flag.Parse()
	var ports []int
	for _, p := range strings.Split(*portsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 || n > 65535 {
			fmt.Fprintf(os.Stderr, "kfakepeer: bad port %q\n", p)
			os.Exit(2)
		}
		ports = append(ports, n)
	}
	c, err := kfake.NewCluster(
		kfake.Ports(ports...),
		kfake.NumBrokers(len(ports)),
		kfake.AllowAutoTopicCreation(),
	)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfakepeer: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("kfakepeer ready %s\n", strings.Join(c.ListenAddrs(), " "))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	c.Close()
}
