package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's utime and stime:
// 100 on every Linux architecture Go supports (sysconf(_SC_CLK_TCK) needs
// cgo, and the kernel fixes USER_HZ at 100 for the user ABI).
const clockTicks = 100

// cpuSeconds returns the user plus system CPU time pid has used, from
// fields 14 and 15 of /proc/<pid>/stat. The command name (field 2) is in
// parentheses and may hold spaces, so fields are counted after its last ')'.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	return parseStatCPU(string(b))
}

func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("bench: malformed /proc stat %q", stat)
	}
	// After ") ": field 3 (state) is index 0, so utime (14) is index 11.
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("bench: short /proc stat %q", stat)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bench: malformed /proc stat times %q %q", f[11], f[12])
	}
	return float64(utime+stime) / clockTicks, nil
}

// openFiles counts the entries of /proc/<pid>/fd.
func openFiles(pid int) (int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	return len(ents), nil
}

// raiseNofile lifts this process's open-file soft limit to its hard limit
// (the idle-connection measurement holds one socket per connection here)
// and returns the limit in force.
func raiseNofile() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, fmt.Errorf("bench: getrlimit: %w", err)
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			return 0, fmt.Errorf("bench: setrlimit: %w", err)
		}
	}
	return l.Cur, nil
}
