package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"samsa/chaos/netns"
	"samsa/zkutil"
)

// ZooKeeperJar is Debian's server jar; its manifest Class-Path names the
// dependency jars.
const ZooKeeperJar = "/usr/share/java/zookeeper.jar"

// Options configures a cluster.
type Options struct {
	Prefix    string // name prefix of namespaces and mounts (default "samsa-chaos")
	Work      string // work dir: configs, logs, tmpfs mount points
	SamsaBin  string // the samsa binary
	Brokers   int    // 3..5
	DiskBytes int64  // size of each broker's log dir disk
	Unclean   bool   // unclean.leader.election.enable
	// LoopDisks: log dirs on ext4 over loop devices (slowdisk.go) instead
	// of plain tmpfs, so SlowDisk can throttle them.
	LoopDisks bool
}

// Cluster is a running ensemble and broker set.
type Cluster struct {
	Opt     Options
	Net     *netns.Net
	ZK      []*Proc // zk1..zk3
	Brokers []*Proc // b1..bN, broker.id = index+1
	Admin   *zkutil.Client
	mounts  []string       // unmounted in reverse order
	loops   []string       // loop devices, detached after the unmounts
	loopDev map[int]string // broker index -> its loop device
}

// ZKNode and BrokerNode name the nodes.
func ZKNode(i int) string     { return "zk" + strconv.Itoa(i+1) }
func BrokerNode(i int) string { return "b" + strconv.Itoa(i+1) }

// ZKConnect is the brokers' zookeeper.connect (with the chroot).
func (c *Cluster) ZKConnect() string {
	var hs []string
	for i := range c.ZK {
		hs = append(hs, net.JoinHostPort(c.Net.IP(ZKNode(i)), "2181"))
	}
	return strings.Join(hs, ",") + "/samsa-chaos"
}

// Bootstrap is the clients' bootstrap list.
func (c *Cluster) Bootstrap() []string {
	var out []string
	for i := range c.Brokers {
		out = append(out, c.BrokerAddr(i))
	}
	return out
}

// BrokerAddr is broker i's listener.
func (c *Cluster) BrokerAddr(i int) string { return net.JoinHostPort(c.Net.IP(BrokerNode(i)), "9092") }

// DiskDir is broker i's tmpfs mount point.
func (c *Cluster) DiskDir(i int) string {
	return filepath.Join(c.Opt.Work, BrokerNode(i), "disk")
}

// Start builds the network, starts the ensemble and the brokers, and waits
// until every broker is registered. On error it tears down what it built.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if o.Prefix == "" {
		o.Prefix = "samsa-chaos"
	}
	if o.Brokers < 3 || o.Brokers > 5 {
		return nil, fmt.Errorf("cluster: %d brokers: want 3 to 5", o.Brokers)
	}
	if _, err := os.Stat(ZooKeeperJar); err != nil {
		return nil, fmt.Errorf("cluster: %s missing: apt-get install zookeeper", ZooKeeperJar)
	}
	nodes := map[string]int{}
	for i := 0; i < 3; i++ {
		nodes[ZKNode(i)] = 11 + i
	}
	for i := 0; i < o.Brokers; i++ {
		nodes[BrokerNode(i)] = 1 + i
	}
	n, err := netns.Setup(o.Prefix, nodes)
	if err != nil {
		return nil, err
	}
	c = &Cluster{Opt: o, Net: n}
	defer func() {
		if err != nil {
			c.Close()
			c = nil
		}
	}()
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("cluster: no java: apt-get install zookeeper")
	}
	for i := 0; i < 3; i++ {
		p, err := c.zkProc(i, java)
		if err != nil {
			return nil, err
		}
		c.ZK = append(c.ZK, p)
	}
	for _, p := range c.ZK {
		if err := p.Start(); err != nil {
			return nil, err
		}
	}
	if err := WaitFor(ctx, 90*time.Second, func() error {
		_, err := c.ZKLeader()
		return err
	}); err != nil {
		return nil, fmt.Errorf("cluster: ensemble: %w", err)
	}
	root := strings.Join(strings.Split(c.ZKConnect(), "/")[:1], "")
	if err := ensureChroot(ctx, root); err != nil {
		return nil, err
	}
	c.Admin, err = zkutil.Connect(ctx, zkutil.Config{Connect: c.ZKConnect(), SessionTimeout: 20 * time.Second, ConnectionTimeout: 60 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("cluster: zookeeper client: %w", err)
	}
	for i := 0; i < o.Brokers; i++ {
		p, err := c.brokerProc(i)
		if err != nil {
			return nil, err
		}
		c.Brokers = append(c.Brokers, p)
	}
	for _, p := range c.Brokers {
		if err := p.Start(); err != nil {
			return nil, err
		}
	}
	if err := WaitFor(ctx, 90*time.Second, c.allRegistered); err != nil {
		return nil, err
	}
	return c, nil
}

// ensureChroot creates the brokers' chroot znode.
func ensureChroot(ctx context.Context, servers string) error {
	zc, err := zkutil.Connect(ctx, zkutil.Config{Connect: servers, SessionTimeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("cluster: zookeeper: %w", err)
	}
	defer zc.Close()
	if err := zc.EnsurePath("/samsa-chaos"); err != nil {
		return fmt.Errorf("cluster: chroot: %w", err)
	}
	return nil
}

func (c *Cluster) zkProc(i int, java string) (*Proc, error) {
	node := ZKNode(i)
	dir := filepath.Join(c.Opt.Work, node)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "myid"), []byte(strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
		return nil, err
	}
	lines := []string{
		"tickTime=500",
		"initLimit=20",
		"syncLimit=4",
		"dataDir=" + filepath.Join(dir, "data"),
		"clientPort=2181",
		"clientPortAddress=" + c.Net.IP(node),
		"maxClientCnxns=0",
		"minSessionTimeout=1000",
		"maxSessionTimeout=60000",
		"admin.enableServer=false",
		"4lw.commands.whitelist=ruok,srvr,stat,mntr",
		"forceSync=no",
	}
	for j := 0; j < 3; j++ {
		lines = append(lines, fmt.Sprintf("server.%d=%s:2888:3888", j+1, c.Net.IP(ZKNode(j))))
	}
	cfg := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfg, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	return newProc(node, filepath.Join(dir, "zookeeper.log"), func() *exec.Cmd {
		return c.Net.Command(node, java, "-Xms16m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-XX:-UsePerfData", "-Xshare:auto", "-Djava.awt.headless=true", "-Dzookeeper.admin.enableServer=false",
			"-cp", ZooKeeperJar, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg)
	}), nil
}

func (c *Cluster) brokerProc(i int) (*Proc, error) {
	node := BrokerNode(i)
	dir := filepath.Join(c.Opt.Work, node)
	disk := c.DiskDir(i)
	if err := os.MkdirAll(disk, 0o755); err != nil {
		return nil, err
	}
	if c.Opt.LoopDisks {
		if err := c.mountLoopDisk(i, disk); err != nil {
			return nil, err
		}
	} else {
		if err := runCmd("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(c.Opt.DiskBytes, 10), c.Opt.Prefix, disk); err != nil {
			return nil, err
		}
		c.mounts = append(c.mounts, disk)
	}
	props := map[string]string{
		"broker.id":                        strconv.Itoa(i + 1),
		"listeners":                        "PLAINTEXT://" + c.BrokerAddr(i),
		"log.dirs":                         filepath.Join(disk, "data"),
		"zookeeper.connect":                c.ZKConnect(),
		"zookeeper.session.timeout.ms":     "6000",
		"num.partitions":                   "3",
		"default.replication.factor":       "3",
		"min.insync.replicas":              "2",
		"unclean.leader.election.enable":   strconv.FormatBool(c.Opt.Unclean),
		"auto.create.topics.enable":        "false",
		"offsets.topic.replication.factor": "3",
		"offsets.topic.num.partitions":     "3",
		// __transaction_state as small as __consumer_offsets here (Kafka's
		// 50 partitions would dominate the recovery waits).
		"transaction.state.log.num.partitions": "3",
		"replica.lag.time.max.ms":              "10000",
		"replica.fetch.wait.max.ms":            "100",
		"group.initial.rebalance.delay.ms":     "0",
		"log.segment.bytes":                    "4194304",
		"controlled.shutdown.enable":           "true",
		"log.level":                            "info",
	}
	var b strings.Builder
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	path := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return newProc(node, filepath.Join(dir, "broker.log"), func() *exec.Cmd {
		return c.Net.Command(node, c.Opt.SamsaBin, "kafka-server-start", path)
	}), nil
}

func (c *Cluster) allRegistered() error {
	ids, err := c.Admin.GetBrokerIDs()
	if err != nil {
		return err
	}
	if len(ids) != len(c.Brokers) {
		return fmt.Errorf("registered brokers %v, want %d", ids, len(c.Brokers))
	}
	return nil
}

// Registered is allRegistered for the recovery check.
func (c *Cluster) Registered() error { return c.allRegistered() }

// Controller is the controller's broker index, or an error.
func (c *Cluster) Controller() (int, error) {
	id, err := c.Admin.GetController()
	if err != nil {
		return -1, err
	}
	if id < 1 || int(id) > len(c.Brokers) {
		return -1, fmt.Errorf("cluster: controller id %d", id)
	}
	return int(id) - 1, nil
}

// ZKLeader asks every ZooKeeper server "srvr" and returns the leader's index.
func (c *Cluster) ZKLeader() (int, error) {
	for i := range c.ZK {
		if mode, err := c.zkMode(i); err == nil && mode == "leader" {
			return i, nil
		}
	}
	return -1, fmt.Errorf("cluster: no zookeeper leader")
}

func (c *Cluster) zkMode(i int) (string, error) {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(c.Net.IP(ZKNode(i)), "2181"), 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := conn.Write([]byte("srvr")); err != nil {
		return "", err
	}
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("cluster: %s: no mode in srvr", ZKNode(i))
}

// FillDisk fills broker i's tmpfs with a filler file, 1 MiB at a time
// until the filesystem says ENOSPC (tmpfs keeps some blocks back from
// what statfs calls available, so one allocation of "all" fails).
func (c *Cluster) FillDisk(i int) error {
	f, err := os.Create(filepath.Join(c.DiskDir(i), "samsa-chaos-filler"))
	if err != nil {
		return err
	}
	defer f.Close()
	const chunk = 1 << 20
	limit := c.Opt.DiskBytes / chunk
	for n := int64(0); n <= limit; n++ {
		err := syscall.Fallocate(int(f.Fd()), 0, n*chunk, chunk)
		if errors.Is(err, syscall.ENOSPC) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("cluster: %s: disk not full after %d MiB", BrokerNode(i), limit)
}

// FreeDisk removes the filler.
func (c *Cluster) FreeDisk(i int) error {
	err := os.Remove(filepath.Join(c.DiskDir(i), "samsa-chaos-filler"))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// Close stops every process, unmounts the disks and removes the network.
func (c *Cluster) Close() {
	if c.Admin != nil {
		c.Admin.Close()
	}
	for _, p := range c.Brokers {
		_ = p.Stop(10 * time.Second)
	}
	for _, p := range c.ZK {
		_ = p.Kill(killWait)
	}
	for i := range c.Brokers {
		_ = c.RestoreDisk(i)
	}
	// Lazy unmounts: a loop filesystem first, then the tmpfs holding its
	// image; the detach then completes when the last user lets go.
	for i := len(c.mounts) - 1; i >= 0; i-- {
		_ = runCmd("umount", "-l", c.mounts[i])
	}
	c.detachLoops()
	if c.Net != nil {
		c.Net.Close()
	}
}

// Cleanup removes the leftovers of a crashed run with prefix: processes
// still running in its namespaces, its tmpfs mounts, its namespaces.
func Cleanup(prefix string) []string {
	var done []string
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], prefix+"-") {
			continue
		}
		pids, _ := exec.Command("ip", "netns", "pids", f[0]).Output()
		for _, s := range strings.Fields(string(pids)) {
			if pid, err := strconv.Atoi(s); err == nil && pid > 1 {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					done = append(done, fmt.Sprintf("killed pid %d in %s", pid, f[0]))
				}
			}
		}
	}
	done = append(done, cleanupLoops(prefix)...)
	mounts, _ := os.ReadFile("/proc/mounts")
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == prefix && f[2] == "tmpfs" {
			if runCmd("umount", "-l", f[1]) == nil {
				done = append(done, "unmounted "+f[1])
			}
		}
	}
	return append(done, netns.Cleanup(prefix)...)
}

func runCmd(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cluster: %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// WaitFor polls cond every 200 ms until it returns nil, ctx ends or d passes.
func WaitFor(ctx context.Context, d time.Duration, cond func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", d, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// WaitDeregistered waits (at most d) until broker i's registration znode is
// gone, as Kafka's hard_bounce test does before restarting a killed broker:
// a broker restarted while its old session's znode still exists refuses to
// start ("broker id already registered"), in Kafka and in Samsa alike.
func (c *Cluster) WaitDeregistered(ctx context.Context, i int, d time.Duration) error {
	return WaitFor(ctx, d, func() error {
		_, err := c.Admin.GetBroker(int32(i + 1))
		if errors.Is(err, zkutil.ErrNoNode) {
			return nil
		}
		if err == nil {
			return fmt.Errorf("%s still registered", BrokerNode(i))
		}
		return err
	})
}

// SaveDisks copies every broker's log dir off its disk (which Close
// unmounts) to <work>/bN/data, for the post-mortem of a failed run.
func (c *Cluster) SaveDisks() error {
	var first error
	for i := range c.Brokers {
		dst := filepath.Join(c.Opt.Work, BrokerNode(i), "data")
		if err := runCmd("cp", "-a", filepath.Join(c.DiskDir(i), "data"), dst); err != nil && first == nil {
			first = err
		}
	}
	return first
}
