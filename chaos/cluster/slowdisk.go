package cluster

// Loop disks and the slow-disk throttle.
//
// With Options.LoopDisks a broker's log dir is ext4 on a loop device whose
// image file lives on a tmpfs of its own (so the disk is still RAM, and
// still DiskBytes big), instead of a plain tmpfs: a block device the
// blkio controller can throttle. This machine's blkio controller is cgroup
// v1, where page-cache writeback is issued by the kernel's flusher threads
// and charged to the root cgroup; the throttle therefore slows what the
// broker's own threads submit: fsync (segment rolls, checkpoints, leader
// epoch files, producer snapshots), O_DIRECT and reads that miss the page
// cache. Buffered appends are not slowed; the "fsync latency" is.
//
// Names: image "<prefix>-bN.img" (Cleanup finds its loop device by it),
// tmpfs source "<prefix>" like the plain disks, cgroup
// /sys/fs/cgroup/blkio/<prefix>-bN.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

const blkioRoot = "/sys/fs/cgroup/blkio"

// mountLoopDisk makes broker i's log dir disk an ext4 filesystem on a loop
// device backed by an image on its own tmpfs.
func (c *Cluster) mountLoopDisk(i int, disk string) error {
	imgDir := disk + ".img"
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		return err
	}
	// ext4's metadata lives in the image too: the tmpfs gets 1/8 more.
	size := c.Opt.DiskBytes + c.Opt.DiskBytes/8
	if err := runCmd("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), c.Opt.Prefix, imgDir); err != nil {
		return err
	}
	c.mounts = append(c.mounts, imgDir)
	img := filepath.Join(imgDir, c.Opt.Prefix+"-"+BrokerNode(i)+".img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		return err
	}
	if err := os.Truncate(img, c.Opt.DiskBytes); err != nil {
		return err
	}
	out, err := exec.Command("losetup", "-f", "--show", img).Output()
	if err != nil {
		return fmt.Errorf("cluster: losetup %s: %w", img, err)
	}
	dev := strings.TrimSpace(string(out))
	c.loops = append(c.loops, dev)
	if c.loopDev == nil {
		c.loopDev = map[int]string{}
	}
	c.loopDev[i] = dev
	// -m 0: no blocks reserved for root (the broker runs as root, and
	// disk-full must fill what it can use).
	if err := runCmd("mkfs.ext4", "-q", "-F", "-m", "0", dev); err != nil {
		return err
	}
	if err := runCmd("mount", dev, disk); err != nil {
		return err
	}
	c.mounts = append(c.mounts, disk)
	return nil
}

// devNumber is the loop device's "major:minor", as blkio wants it.
func devNumber(dev string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "dev"))
	if err != nil {
		return "", fmt.Errorf("cluster: %s: %w", dev, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (c *Cluster) blkioDir(i int) string {
	return filepath.Join(blkioRoot, c.Opt.Prefix+"-"+BrokerNode(i))
}

// SlowDisk limits broker i's log dir to iops reads and writes per second
// for the broker's process (its own cgroup v1 blkio group). It needs
// LoopDisks.
func (c *Cluster) SlowDisk(i int, iops int) error {
	dev, ok := c.loopDev[i]
	if !ok {
		return fmt.Errorf("cluster: %s has no loop disk (slow-disk needs Options.LoopDisks)", BrokerNode(i))
	}
	num, err := devNumber(dev)
	if err != nil {
		return err
	}
	pid := c.Brokers[i].Pid()
	if pid == 0 || !c.Brokers[i].Running() {
		return fmt.Errorf("cluster: %s is not running", BrokerNode(i))
	}
	dir := c.blkioDir(i)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cluster: blkio cgroup: %w", err)
	}
	rule := fmt.Sprintf("%s %d", num, iops)
	for _, f := range []string{"blkio.throttle.write_iops_device", "blkio.throttle.read_iops_device"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(rule), 0o644); err != nil {
			return fmt.Errorf("cluster: %s: %w", f, err)
		}
	}
	// cgroup.procs moves every thread of the process.
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("cluster: blkio cgroup.procs: %w", err)
	}
	return nil
}

// RestoreDisk lifts SlowDisk: the broker's process back in the root blkio
// group, the limits removed, the group deleted. A no-op when SlowDisk was
// never applied to broker i.
func (c *Cluster) RestoreDisk(i int) error {
	dir := c.blkioDir(i)
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
		for _, pid := range strings.Fields(string(b)) {
			keep(os.WriteFile(filepath.Join(blkioRoot, "cgroup.procs"), []byte(pid), 0o644))
		}
	}
	if dev, ok := c.loopDev[i]; ok {
		if num, err := devNumber(dev); err == nil {
			for _, f := range []string{"blkio.throttle.write_iops_device", "blkio.throttle.read_iops_device"} {
				keep(os.WriteFile(filepath.Join(dir, f), []byte(num+" 0"), 0o644))
			}
		}
	}
	keep(os.Remove(dir))
	return first
}

// detachLoops detaches the loop devices (after their filesystems were
// unmounted: a lazy unmount leaves autoclear to finish the detach).
func (c *Cluster) detachLoops() {
	for _, dev := range c.loops {
		_ = runCmd("losetup", "-d", dev)
	}
}

// cleanupLoops is Cleanup's share: unmount and detach every loop device
// backed by one of prefix's images, remove prefix's blkio groups.
func cleanupLoops(prefix string) []string {
	var done []string
	out, _ := exec.Command("losetup", "-a").Output()
	var devs []string
	for _, line := range strings.Split(string(out), "\n") {
		dev, rest, ok := strings.Cut(line, ":")
		if ok && strings.Contains(rest, "/"+prefix+"-b") && strings.Contains(rest, ".img") {
			devs = append(devs, dev)
		}
	}
	mounts, _ := os.ReadFile("/proc/mounts")
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		for _, dev := range devs {
			if len(f) >= 2 && f[0] == dev && runCmd("umount", "-l", f[1]) == nil {
				done = append(done, "unmounted "+f[1])
			}
		}
	}
	for _, dev := range devs {
		if runCmd("losetup", "-d", dev) == nil {
			done = append(done, "detached "+dev)
		}
	}
	groups, _ := filepath.Glob(filepath.Join(blkioRoot, prefix+"-b*"))
	for _, g := range groups {
		if b, err := os.ReadFile(filepath.Join(g, "cgroup.procs")); err == nil {
			for _, pid := range strings.Fields(string(b)) {
				_ = os.WriteFile(filepath.Join(blkioRoot, "cgroup.procs"), []byte(pid), 0o644)
			}
		}
		if os.Remove(g) == nil {
			done = append(done, "removed "+g)
		}
	}
	return done
}
