package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/tools/internal/tooltest"
	"samsa/zkutil"
)

// fakeHost is a host with the given sysctls, limit, mounts and disks.
func fakeHost(sysctl map[string]string, nofile uint64, mountinfo string, disks map[string][2]uint64) hostProbe {
	return hostProbe{
		readFile: func(path string) ([]byte, error) {
			if path == "/proc/self/mountinfo" {
				return []byte(mountinfo), nil
			}
			if v, ok := sysctl[path]; ok {
				return []byte(v + "\n"), nil
			}
			return nil, os.ErrNotExist
		},
		noFileLimit: func() (uint64, error) { return nofile, nil },
		diskSpace: func(path string) (uint64, uint64, error) {
			if d, ok := disks[path]; ok {
				return d[0], d[1], nil
			}
			return 0, 0, errors.New("no such disk")
		},
		exists: func(path string) bool { _, ok := disks[path]; return ok },
	}
}

const testMountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 8:17 / /data rw,noatime shared:2 - xfs /dev/sdb1 rw
31 22 8:33 / /mnt/big\040disk rw,relatime shared:3 - xfs /dev/sdc1 rw
`

func TestToolDoctorHost(t *testing.T) {
	const gib = 1 << 30
	var buf bytes.Buffer
	for _, tc := range []struct {
		name string
		host hostProbe
		dirs []string
	}{
		{"healthy", fakeHost(map[string]string{"/proc/sys/vm/swappiness": "1", "/proc/sys/vm/dirty_background_ratio": "5", "/proc/sys/vm/dirty_ratio": "60"},
			1048576, testMountinfo, map[string][2]uint64{"/data/kafka": {500 * gib, 1000 * gib}}), []string{"/data/kafka"}},
		{"untuned", fakeHost(map[string]string{"/proc/sys/vm/swappiness": "60", "/proc/sys/vm/dirty_background_ratio": "20", "/proc/sys/vm/dirty_ratio": "40"},
			1024, testMountinfo, map[string][2]uint64{"/": {10 * gib, 100 * gib}, "/mnt/big disk": {1 * gib, 100 * gib}}), []string{"/var/kafka-logs", "/mnt/big disk/logs"}},
		{"dirty ratio and no log dirs", fakeHost(map[string]string{"/proc/sys/vm/swappiness": "0", "/proc/sys/vm/dirty_background_ratio": "10", "/proc/sys/vm/dirty_ratio": "90"},
			200000, testMountinfo, nil), nil},
		{"unreadable", fakeHost(nil, 200000, testMountinfo, nil), []string{"/nowhere"}},
	} {
		r := &doctorReport{}
		checkHost(r, tc.host, tc.dirs)
		fmt.Fprintf(&buf, "== %s (%d problems)\n", tc.name, r.problems())
		r.write(&buf)
	}
	tooltest.CheckGolden(t, "doctor_host", buf.Bytes())
}

// TestToolDoctorCluster: the doctor passes a healthy cluster and flags an
// under-replicated __consumer_offsets with RF 1, a follower that is down and
// a broker registered in ZooKeeper that accepts no connections.
func TestToolDoctorCluster(t *testing.T) {
	c := brokertest.NewCluster(t, 2, brokertest.WithProperty("offsets.topic.num.partitions", "2"),
		brokertest.WithProperty("replica.lag.time.max.ms", "1000"))
	c.CreateTopic(t, "orders", 2, 2)
	c.WaitForISR(t, "orders", 0, 2)
	c.WaitForISR(t, "orders", 1, 2)
	doctor := func(args ...string) (string, int) {
		t.Helper()
		out, errOut, code := runTool(t, "", append([]string{"doctor", "--skip-host", "--timeout", "3s"}, args...)...)
		if errOut != "" {
			t.Logf("stderr: %s", errOut)
		}
		return out, code
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if out, code := doctor("--bootstrap-server", c.Addr(0), "--zookeeper", c.ZKConnect()); code != 0 {
			return fmt.Errorf("healthy cluster: exit %d\n%s", code, out)
		}
		return nil
	})

	// __consumer_offsets with RF 1 (offsets.topic.replication.factor=1).
	client := c.Sarama(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	brokertest.WaitFor(t, 30*time.Second, func() error {
		_, err := client.Coordinator("doctor-group")
		return err
	})
	out, code := doctor("--bootstrap-server", c.Addr(0))
	if code != 1 || !strings.Contains(out, "[WARN] __consumer_offsets: 2 partition(s) with a replication factor below 3, 2 with an ISR of one") ||
		!strings.Contains(out, "fix: raise its replication factor to 3 with bin/kafka-reassign-partitions.sh") {
		t.Fatalf("offsets topic not flagged: exit %d\n%s", code, out)
	}

	// A broker registered in ZooKeeper that accepts no connections.
	zk := c.ZooKeeper(t)
	if _, err := zk.RegisterBroker(zkutil.BrokerRegistration{ID: 99, JMXPort: -1, Timestamp: 1,
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: int32(tooltest.FreePort(t))}}}); err != nil {
		t.Fatal(err)
	}
	out, code = doctor("--zookeeper", c.ZKConnect())
	if code != 1 || !strings.Contains(out, "[FAIL] 1 broker endpoint(s) registered but not accepting connections") || !strings.Contains(out, "broker 99 at 127.0.0.1:") {
		t.Fatalf("unreachable broker not flagged: exit %d\n%s", code, out)
	}
	if err := zk.DeregisterBroker(99); err != nil {
		t.Fatal(err)
	}

	// A follower down: under-replicated partitions.
	c.Kill(1)
	c.WaitForISR(t, "orders", 0, 1)
	c.WaitForISR(t, "orders", 1, 1)
	out, code = doctor("--zookeeper", c.ZKConnect())
	if code != 1 || !strings.Contains(out, "[WARN] 2 partition(s) under-replicated") || !strings.Contains(out, "orders-0 leader") {
		t.Fatalf("under-replicated partitions not flagged: exit %d\n%s", code, out)
	}
	t.Logf("doctor output:\n%s", out)
}

func FuzzToolDoctorMountinfo(f *testing.F) {
	f.Add(testMountinfo, "/mnt/big disk/logs")
	f.Add("1 2 3 4 /a\\04 rw\n1 2 3 4 \\", "/a")
	f.Add("", "/")
	f.Fuzz(func(t *testing.T, info, path string) {
		p := fakeHost(nil, 0, info, nil)
		mounts, err := parseMountInfo(p)
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := mountFor(mounts, path); ok && !strings.HasPrefix(path, strings.TrimSuffix(m.point, "/")) && m.point != "/" {
			t.Fatalf("mount %q for %q", m.point, path)
		}
	})
}
