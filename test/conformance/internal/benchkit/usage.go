package benchkit

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is a snapshot of the process's resource use.
type Usage struct {
	At      time.Time
	CPU     time.Duration // user + sys (getrusage RUSAGE_SELF)
	MaxRSS  int64         // KiB: VmHWM (see PeakRSS)
	Mallocs uint64
	Bytes   uint64 // TotalAlloc
	NumGC   uint32
	// Read and write system calls so far (syscr and syscw of /proc/self/io; -1 when
	// unavailable).
	Reads, Writes int64
}

// TakeUsage reads getrusage(RUSAGE_SELF), the peak RSS and, when mem is set, runtime.MemStats (which
// stops the world briefly: not inside a measured idle window).
func TakeUsage(mem bool) Usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // cannot fail for RUSAGE_SELF
	u := Usage{
		At:     time.Now(),
		CPU:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		MaxRSS: PeakRSS(),
	}
	u.Reads, u.Writes = ioCalls()
	if mem {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		u.Mallocs, u.Bytes, u.NumGC = ms.Mallocs, ms.TotalAlloc, ms.NumGC
	}
	return u
}

// RSS returns the process's current resident set size in KiB (VmRSS), or -1.
func RSS() int64 { return statusKiB("VmRSS:") }

// PeakRSS returns the process's peak resident set size in KiB (VmHWM), or -1. Unlike
// getrusage's ru_maxrss, which Linux keeps across execve (so a child's starts at its
// parent's size when it was started), VmHWM belongs to the program's own memory.
func PeakRSS() int64 { return statusKiB("VmHWM:") }

// statusKiB reads a "kB" field of /proc/self/status.
func statusKiB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// ProcessCPU returns the user+sys CPU time of process pid so far, from /proc/pid/stat
// (for the fake broker's process, which the orchestrator started).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	// The command name is in parentheses and may hold spaces: fields count after it.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("benchkit: /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// After the name: state(0) ... utime is field 14 of the line, index 11 here.
	if len(f) < 13 {
		return 0, fmt.Errorf("benchkit: /proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("benchkit: /proc/%d/stat: bad utime or stime", pid)
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticks, nil
}

// ioCalls returns the process's read and write system calls so far (syscr and syscw of
// /proc/self/io), or -1, -1.
func ioCalls() (reads, writes int64) {
	reads, writes = -1, -1
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return reads, writes
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "syscr":
			reads = n
		case "syscw":
			writes = n
		}
	}
	return reads, writes
}
