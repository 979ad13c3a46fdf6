package doctor

// Host checks of samsa doctor, after Kafka's operations notes: little
// swapping, early background writeback, no atime updates on log dirs, many
// file descriptors (one per segment file and connection), free disk.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// hostProbe reads the host; tests replace it.
type hostProbe struct {
	// readFile reads a file such as /proc/sys/vm/swappiness.
	readFile func(path string) ([]byte, error)
	// noFileLimit returns the soft RLIMIT_NOFILE of this process (the
	// shell's limit, which a broker started from it inherits).
	noFileLimit func() (uint64, error)
	// diskSpace returns the free (for unprivileged users) and total bytes
	// of the file system holding path.
	diskSpace func(path string) (free, total uint64, err error)
	// exists reports whether path exists.
	exists func(path string) bool
}

func realHostProbe() hostProbe {
	return hostProbe{
		readFile: os.ReadFile,
		noFileLimit: func() (uint64, error) {
			var rl syscall.Rlimit
			if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
				return 0, err
			}
			return rl.Cur, nil
		},
		diskSpace: func(path string) (uint64, uint64, error) {
			var st syscall.Statfs_t
			if err := syscall.Statfs(path, &st); err != nil {
				return 0, 0, err
			}
			return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
		},
		exists: func(path string) bool { _, err := os.Stat(path); return err == nil },
	}
}

// Thresholds of the host checks.
const (
	maxSwappiness        = 1
	maxDirtyBackground   = 10
	maxDirtyRatio        = 80
	minNoFile            = 100000
	warnFreeDiskFraction = 0.15
	failFreeDiskFraction = 0.05
)

const hostSection = "Host"

// readSysctl reads an integer from /proc/sys.
func readSysctl(p hostProbe, name string) (int, error) {
	data, err := p.readFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

func checkHost(r *doctorReport, p hostProbe, logDirs []string) {
	persist := "; persist it in /etc/sysctl.d/99-samsa.conf"
	if v, err := readSysctl(p, "vm.swappiness"); err != nil {
		r.add(hostSection, finding{sev: sevWarn, summary: "cannot read vm.swappiness: " + err.Error()})
	} else if v > maxSwappiness {
		r.add(hostSection, finding{sev: sevWarn, summary: fmt.Sprintf("vm.swappiness = %d: the kernel may swap the broker's memory out to keep page cache, and a swapped broker stalls and drops out of ISRs", v),
			fix: fmt.Sprintf("sysctl -w vm.swappiness=%d%s", maxSwappiness, persist)})
	} else {
		r.ok(hostSection, "vm.swappiness = %d", v)
	}

	bg, errBg := readSysctl(p, "vm.dirty_background_ratio")
	dr, errDr := readSysctl(p, "vm.dirty_ratio")
	switch {
	case errBg != nil || errDr != nil:
		err := errBg
		if err == nil {
			err = errDr
		}
		r.add(hostSection, finding{sev: sevWarn, summary: fmt.Sprintf("cannot read vm.dirty_background_ratio / vm.dirty_ratio: %v", err)})
	case bg > maxDirtyBackground:
		r.add(hostSection, finding{sev: sevWarn, summary: fmt.Sprintf("vm.dirty_background_ratio = %d: background writeback starts late, so log data is flushed in large bursts that stall appends", bg),
			fix: "sysctl -w vm.dirty_background_ratio=5" + persist})
	case dr > maxDirtyRatio:
		r.add(hostSection, finding{sev: sevWarn, summary: fmt.Sprintf("vm.dirty_ratio = %d: up to %d%% of memory may be dirty before writers block, and then they stall for a long flush", dr, dr),
			fix: "sysctl -w vm.dirty_ratio=60" + persist})
	case dr <= bg:
		r.add(hostSection, finding{sev: sevWarn, summary: fmt.Sprintf("vm.dirty_ratio = %d is not above vm.dirty_background_ratio = %d: writers block as soon as background writeback starts", dr, bg),
			fix: "sysctl -w vm.dirty_ratio=60 (above the background ratio, at most 80)" + persist})
	default:
		r.ok(hostSection, "vm.dirty_background_ratio = %d, vm.dirty_ratio = %d", bg, dr)
	}

	if n, err := p.noFileLimit(); err != nil {
		r.add(hostSection, finding{sev: sevWarn, summary: "cannot read the file-descriptor limit: " + err.Error()})
	} else if n < minNoFile {
		r.add(hostSection, finding{sev: sevWarn, summary: fmt.Sprintf("file-descriptor limit (ulimit -n) = %d: a broker keeps 3 files open per segment plus one per connection and fails with \"Too many open files\"", n),
			fix: fmt.Sprintf("ulimit -n %d before starting the broker, or LimitNOFILE=%d in its systemd unit, or nofile in /etc/security/limits.conf", minNoFile, minNoFile)})
	} else {
		r.ok(hostSection, "file-descriptor limit = %d", n)
	}

	if len(logDirs) == 0 {
		r.ok(hostSection, "no log dirs given (--config server.properties or --log-dirs): noatime and disk space not checked")
		return
	}
	mounts, err := parseMountInfo(p)
	for _, dir := range logDirs {
		existing := nearestExisting(p, dir)
		if err != nil {
			r.add(hostSection, finding{sev: sevWarn, summary: "cannot read /proc/self/mountinfo: " + err.Error()})
		} else if m, ok := mountFor(mounts, existing); ok {
			if hasOption(m.options, "noatime") {
				r.ok(hostSection, "%s: mounted with noatime (%s)", dir, m.point)
			} else {
				r.add(hostSection, finding{sev: sevWarn, summary: fmt.Sprintf("%s: %s is mounted without noatime (%s): every read of a segment also writes its access time", dir, m.point, m.options),
					fix: fmt.Sprintf("add noatime to the options of %s in /etc/fstab, then: mount -o remount,noatime %s", m.point, m.point)})
			}
		}
		free, total, err := p.diskSpace(existing)
		if err != nil || total == 0 {
			r.add(hostSection, finding{sev: sevWarn, summary: fmt.Sprintf("%s: cannot read free disk space: %v", dir, err)})
			continue
		}
		frac := float64(free) / float64(total)
		msg := fmt.Sprintf("%s: %s free of %s (%.0f%%)", dir, humanBytes(free), humanBytes(total), frac*100)
		fix := "delete or move data, lower retention.ms / retention.bytes of the largest topics (kafka-configs.sh), or add a disk to log.dirs"
		switch {
		case frac < failFreeDiskFraction:
			r.add(hostSection, finding{sev: sevFail, summary: msg + ": a full disk takes the log dir offline", fix: fix})
		case frac < warnFreeDiskFraction:
			r.add(hostSection, finding{sev: sevWarn, summary: msg + ": less than 15% left", fix: fix})
		default:
			r.ok(hostSection, "%s", msg)
		}
	}
}

// nearestExisting returns dir or its closest existing parent.
func nearestExisting(p hostProbe, dir string) string {
	d := filepath.Clean(dir)
	for i := 0; i < 256 && !p.exists(d); i++ {
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return d
}

type mount struct{ point, options string }

// parseMountInfo reads /proc/self/mountinfo: field 5 is the mount point
// (octal escapes such as \040 for a space), field 6 the mount options.
func parseMountInfo(p hostProbe) ([]mount, error) {
	data, err := p.readFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []mount
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		out = append(out, mount{point: unescapeMount(f[4]), options: f[5]})
	}
	return out, nil
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountFor returns the mount whose point is the longest prefix of path
// (the last one listed wins among equal points, as later mounts hide
// earlier ones).
func mountFor(mounts []mount, path string) (mount, bool) {
	best, found := mount{}, false
	for _, m := range mounts {
		if m.point == "/" || path == m.point || strings.HasPrefix(path, strings.TrimSuffix(m.point, "/")+"/") {
			if !found || len(m.point) >= len(best.point) {
				best, found = m, true
			}
		}
	}
	return best, found
}

func hasOption(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
