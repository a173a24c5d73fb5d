package benchrun

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
)

func clientLabel(c string) string {
	switch c {
	case "raw":
		return "raw puller (ceiling)"
	case "peer":
		return "rocketmq-client-go"
	default:
		return c
	}
}

func settingLabel(client, s string) string {
	switch {
	case client == "raw":
		return "1 pull in flight per queue, batch 32"
	case s == settingTuned:
		return fmt.Sprintf("pull batch %d, consume batch %d", tunedPull, tunedConsume)
	default:
		return "default"
	}
}

// write prints the report as Markdown tables.
func (rep *Report) write(w io.Writer, cfg *Config) {
	if len(rep.Consume) > 0 {
		rep.writeConsume(w, cfg)
	}
	if len(rep.Latency) > 0 {
		rep.writeLatency(w)
	}
	if len(rep.Idle) > 0 {
		rep.writeIdle(w)
	}
}

type key struct{ workload, client, setting string }

func (rep *Report) groups() (map[key][]ConsumeRun, []key) {
	m := map[key][]ConsumeRun{}
	var order []key
	for _, r := range rep.Consume {
		k := key{r.Workload, r.Client, r.Variant}
		if _, ok := m[k]; !ok {
			order = append(order, k)
		}
		m[k] = append(m[k], r)
	}
	return m, order
}

func pick(runs []ConsumeRun, f func(ConsumeRun) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = f(r)
	}
	return out
}

func (rep *Report) writeConsume(w io.Writer, cfg *Config) {
	m, order := rep.groups()
	workloads := []string{}
	for _, k := range order {
		if !slices.Contains(workloads, k.workload) {
			workloads = append(workloads, k.workload)
		}
	}
	for _, wl := range workloads {
		n := int64(0)
		for _, k := range order {
			if k.workload == wl {
				n = m[k][0].N
			}
		}
		runs := len(m[order[0]])
		fmt.Fprintf(w, "\n#### consume-all: %s messages of %s over %d queues (median of %d runs; msgs/s min–max)\n\n",
			groupDigits(n), wl, consumeQueues, runs)
		fmt.Fprintln(w, "| client | settings | msgs/s | CPU s per M msgs | allocs per msg | peak RSS MB | peak goroutines | broker CPU s per M | machine idle / steal |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
		var ceiling float64
		for _, k := range order {
			if k.workload != wl {
				continue
			}
			rs := m[k]
			tput := pick(rs, func(r ConsumeRun) float64 { return r.MsgsPerSec })
			med := benchkit.Median(tput)
			if k.client == "raw" {
				ceiling = med
			}
			broker := "–"
			if rs[0].BrokerCPUPerMillion > 0 {
				broker = fmt.Sprintf("%.2f", benchkit.Median(pick(rs, func(r ConsumeRun) float64 { return r.BrokerCPUPerMillion })))
			}
			fmt.Fprintf(w, "| %s | %s | %s (%s–%s) | %.2f | %.2f | %.1f | %.0f | %s | %s |\n",
				clientLabel(k.client), settingLabel(k.client, k.setting),
				groupDigits(int64(med)), groupDigits(int64(slices.Min(tput))), groupDigits(int64(slices.Max(tput))),
				benchkit.Median(pick(rs, func(r ConsumeRun) float64 { return r.CPUPerMillion })),
				benchkit.Median(pick(rs, func(r ConsumeRun) float64 { return r.MallocsPerMsg })),
				slices.Max(pick(rs, func(r ConsumeRun) float64 { return float64(r.MaxRSSKiB) / 1024 })),
				slices.Max(pick(rs, func(r ConsumeRun) float64 { return float64(r.PeakGoroutines) })),
				broker, machineShares(rs))
		}
		rep.writeRequests(w, wl, m, order)
		fmt.Fprintln(w)
		var ours []string
		for _, k := range order {
			if k.workload == wl && k.client != "raw" && k.client != "peer" && !slices.Contains(ours, k.client) {
				ours = append(ours, k.client)
			}
		}
		for _, s := range []string{settingDefault, settingTuned} {
			for _, c := range ours {
				writeRatio(w, wl, c, s, m[key{wl, c, s}], m[key{wl, "peer", s}], ceiling)
				if c != "rmqpush" {
					writePaired(w, wl, c, s, m[key{wl, c, s}], m[key{wl, "rmqpush", s}])
				}
			}
		}
	}
}

// writeRequests prints, when the fake cluster counted them, the requests each client
// sent per 1,000 messages and its pull turnaround, medians over the runs.
func (rep *Report) writeRequests(w io.Writer, wl string, m map[key][]ConsumeRun, order []key) {
	counted := false
	for _, k := range order {
		if k.workload == wl && m[k][0].RequestsPerThousand != nil {
			counted = true
		}
	}
	if !counted {
		return
	}
	fmt.Fprintln(w, "\n| client | settings | PULL_MESSAGE per 1,000 msgs | other requests per 1,000 msgs | others by request | pull turnaround p50 / p99 µs |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|---:|")
	for _, k := range order {
		if k.workload != wl {
			continue
		}
		rs := m[k]
		pulls := benchkit.Median(pick(rs, func(r ConsumeRun) float64 { return r.RequestsPerThousand[protocol.RequestPullMessage] }))
		others := benchkit.Median(pick(rs, func(r ConsumeRun) float64 { return otherRequests(r.RequestsPerThousand) }))
		turn := "–"
		if rs[0].TurnaroundCount > 0 {
			turn = fmt.Sprintf("%.0f / %.0f", benchkit.Median(pick(rs, func(r ConsumeRun) float64 { return r.TurnaroundP50Micros })),
				benchkit.Median(pick(rs, func(r ConsumeRun) float64 { return r.TurnaroundP99Micros })))
		}
		fmt.Fprintf(w, "| %s | %s | %.2f | %.3f | %s | %s |\n", clientLabel(k.client), settingLabel(k.client, k.setting),
			pulls, others, formatRequests(rs[len(rs)/2].RequestsPerThousand), turn)
	}
}

// otherRequests sums the requests per 1,000 messages other than PULL_MESSAGE.
func otherRequests(perThousand map[int32]float64) float64 {
	t := 0.0
	for code, v := range perThousand {
		if code != protocol.RequestPullMessage {
			t += v
		}
	}
	return t
}

// formatRequests lists requests per 1,000 messages other than PULL_MESSAGE, the most
// frequent first: "UPDATE_CONSUMER_OFFSET 4.21, HEART_BEAT 0.01".
func formatRequests(perThousand map[int32]float64) string {
	if perThousand == nil {
		return "not counted"
	}
	codes := make([]int32, 0, len(perThousand))
	for c := range perThousand {
		if c != protocol.RequestPullMessage {
			codes = append(codes, c)
		}
	}
	if len(codes) == 0 {
		return "none"
	}
	slices.SortFunc(codes, func(a, b int32) int {
		if perThousand[a] != perThousand[b] {
			if perThousand[a] > perThousand[b] {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s %.3f", protocol.RequestName(c), perThousand[c])
	}
	return strings.Join(parts, ", ")
}

// machineShares is the median idle and steal shares of the machine over runs, or "–"
// when a run could not read them.
func machineShares(runs []ConsumeRun) string {
	for _, r := range runs {
		if r.MachineIdle < 0 {
			return "–"
		}
	}
	return fmt.Sprintf("%.0f %% / %.0f %%",
		100*benchkit.Median(pick(runs, func(r ConsumeRun) float64 { return r.MachineIdle })),
		100*benchkit.Median(pick(runs, func(r ConsumeRun) float64 { return r.MachineSteal })))
}

// formatMachine is a run's machine shares for the progress log.
func formatMachine(idle, steal float64) string {
	if idle < 0 {
		return "idle and steal unknown"
	}
	return fmt.Sprintf("%.0f %% idle, %.0f %% stolen", 100*idle, 100*steal)
}

// formatTurnaround returns ", pull turnaround p50 … p99 …" for a run that measured it.
func formatTurnaround(r benchkit.Result) string {
	if r.TurnaroundCount == 0 {
		return ""
	}
	return fmt.Sprintf(", pull turnaround p50 %.0f µs p99 %.0f µs over %d pulls", r.TurnaroundP50Micros, r.TurnaroundP99Micros, r.TurnaroundCount)
}

// writeRatio prints how client compares with the peer in the same rounds.
func writeRatio(w io.Writer, wl, client, s string, a, b []ConsumeRun, ceiling float64) {
	if len(a) == 0 || len(b) == 0 {
		return
	}
	var tr, cr []float64
	for i := range min(len(a), len(b)) {
		if b[i].MsgsPerSec > 0 && b[i].CPUPerMillion > 0 {
			tr = append(tr, a[i].MsgsPerSec/b[i].MsgsPerSec)
			cr = append(cr, a[i].CPUPerMillion/b[i].CPUPerMillion)
		}
	}
	line := fmt.Sprintf("- %s, %s: %s ÷ rocketmq-client-go, same rounds (median of the %d per-round ratios): throughput ×%.2f, CPU per message ×%.2f",
		wl, settingLabel(client, s), client, len(tr), benchkit.Median(tr), benchkit.Median(cr))
	if ceiling > 0 {
		line += fmt.Sprintf("; %s at %.0f %% of the ceiling, the peer at %.0f %%", client,
			100*benchkit.Median(pick(a, func(r ConsumeRun) float64 { return r.MsgsPerSec }))/ceiling,
			100*benchkit.Median(pick(b, func(r ConsumeRun) float64 { return r.MsgsPerSec }))/ceiling)
	}
	fmt.Fprintln(w, line)
}

// writePaired prints how an extra worker (another build, say) compares with rmqpush
// round by round: on a noisy machine or broker the medians of the per-round differences
// say more than the difference of the medians.
func writePaired(w io.Writer, wl, client, s string, a, b []ConsumeRun) {
	if len(a) == 0 || len(b) == 0 {
		return
	}
	var cpu, tput []float64
	lower := 0
	for i := range min(len(a), len(b)) {
		if b[i].MsgsPerSec > 0 {
			d := a[i].CPUPerMillion - b[i].CPUPerMillion
			cpu = append(cpu, d)
			tput = append(tput, a[i].MsgsPerSec/b[i].MsgsPerSec)
			if d < 0 {
				lower++
			}
		}
	}
	if len(cpu) == 0 {
		return
	}
	fmt.Fprintf(w, "- %s, %s: %s − rmqpush, same rounds (medians of the %d per-round figures): CPU per M %+.2f s (lower in %d of %d rounds), throughput ×%.2f\n",
		wl, settingLabel(client, s), client, len(cpu), benchkit.Median(cpu), lower, len(cpu), benchkit.Median(tput))
}

func (rep *Report) writeLatency(w io.Writer) {
	r0 := rep.Latency[0]
	fmt.Fprintf(w, "\n#### latency: %d msg/s of %d B, consume time minus send time (ms)\n\n", r0.Rate, latencyBodySize)
	fmt.Fprintln(w, "| client | run | messages | p50 | p99 | p99.9 | max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rep.Latency {
		fmt.Fprintf(w, "| %s | %d | %s | %.2f | %.2f | %.2f | %.2f |\n", clientLabel(r.Client), r.Round,
			groupDigits(int64(r.LatencyCount)), r.P50Micros/1000, r.P99Micros/1000, r.P999Micros/1000, r.MaxMicros/1000)
	}
}

func (rep *Report) writeIdle(w io.Writer) {
	r0 := rep.Idle[0]
	fmt.Fprintf(w, "\n#### idle: one consumer of %d queues, no traffic, %.0f s window\n\n", r0.Queues, r0.WindowSeconds)
	fmt.Fprintln(w, "| client | CPU % of a core | goroutines peak (mean) | RSS MB | requests/s | by request |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	for _, r := range rep.Idle {
		reqs, by := "not counted", "–"
		if r.Counted {
			reqs = fmt.Sprintf("%.2f", r.total())
			var parts []string
			codes := make([]int32, 0, len(r.Requests))
			for c := range r.Requests {
				codes = append(codes, c)
			}
			slices.SortFunc(codes, func(a, b int32) int {
				if r.Requests[a] != r.Requests[b] {
					if r.Requests[a] > r.Requests[b] {
						return -1
					}
					return 1
				}
				return int(a - b)
			})
			for _, c := range codes {
				parts = append(parts, fmt.Sprintf("%s %.2f", protocol.RequestName(c), r.Requests[c]))
			}
			by = strings.Join(parts, ", ")
		}
		fmt.Fprintf(w, "| %s | %.3f | %d (%.1f) | %.1f | %s | %s |\n", clientLabel(r.Client), r.CPUPercent,
			r.PeakGoroutines, r.AvgGoroutines, float64(r.RSSKiB)/1024, reqs, by)
	}
}

// groupDigits writes n with thin thousands separators: 1,000,000.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
