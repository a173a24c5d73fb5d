package benchkit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MachineCPU is the time all of the machine's cores spent so far, in USER_HZ ticks, by
// what they did: the first line of /proc/stat. On a virtual machine the hypervisor's
// other guests take their share as steal: a run during which the machine was idle or
// stolen from says more about the machine than about the client.
type MachineCPU struct {
	Busy  int64 // user, nice, system, irq, softirq (guest time is counted in user)
	Idle  int64 // idle and iowait
	Steal int64 // taken by the hypervisor for other guests
}

// ReadMachineCPU reads the machine's CPU time from /proc/stat.
func ReadMachineCPU() (MachineCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineCPU{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return ParseMachineCPU(line)
}

// ParseMachineCPU parses the aggregate "cpu" line of /proc/stat: user nice system idle
// iowait irq softirq steal, and the guest fields, which user and nice already count.
func ParseMachineCPU(line string) (MachineCPU, error) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return MachineCPU{}, fmt.Errorf("benchkit: /proc/stat: %q is not the cpu line with 8 counters", line)
	}
	var v [8]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || n < 0 {
			return MachineCPU{}, fmt.Errorf("benchkit: /proc/stat: counter %d of the cpu line is %q", i+1, f[i+1])
		}
		v[i] = n
	}
	const user, nice, system, idle, iowait, irq, softirq, steal = 0, 1, 2, 3, 4, 5, 6, 7
	return MachineCPU{
		Busy:  v[user] + v[nice] + v[system] + v[irq] + v[softirq],
		Idle:  v[idle] + v[iowait],
		Steal: v[steal],
	}, nil
}

// Shares returns the fractions of all cores' time from earlier to m that were idle and
// that the hypervisor took.
func (m MachineCPU) Shares(earlier MachineCPU) (idle, steal float64, err error) {
	busy, idl, st := m.Busy-earlier.Busy, m.Idle-earlier.Idle, m.Steal-earlier.Steal
	total := busy + idl + st
	if busy < 0 || idl < 0 || st < 0 || total == 0 {
		return 0, 0, errors.New("benchkit: /proc/stat: the readings are out of order or no CPU time passed between them")
	}
	return float64(idl) / float64(total), float64(st) / float64(total), nil
}
