// Command scale measures one process consuming many queues (issue 15): 1 consumer of 250
// topics × 8 queues over 2 brokers (2,000 queues), then 8 consumers in 8 groups on the
// same topics, in this process, against a fake cluster in a child process (the same
// binary, run with -serve-cluster), so the figures are the consumers' own. It prints a
// Markdown table (progress on stderr):
//
//	go run ./test/scale/cmd/scale > scale.md
//	go run ./test/scale/cmd/scale -topics 50 -consumers 1 -idle 10s   # smaller
//
// Figures come from this machine and the fake broker, not a real cluster.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/test/fakebroker"
	"github.com/rmqpush/rmqpush/test/fakebroker/control"
	"github.com/rmqpush/rmqpush/test/scale"
)

type settings struct {
	topics, queues, brokers int
	consumers               []int
	settle, idle            time.Duration
	serveCluster            bool
	cpuProfile, memProfile  string
}

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "scale:", err)
		}
		os.Exit(2)
	}
}

func parse(args []string, stderr io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&s.topics, "topics", 250, "topics")
	fs.IntVar(&s.queues, "queues", 4, "queues per topic on each broker")
	fs.IntVar(&s.brokers, "brokers", 2, "brokers")
	consumers := fs.String("consumers", "1,8", "comma-separated consumer counts, one run each")
	fs.DurationVar(&s.settle, "settle", 5*time.Second, "wait after the last Start before the idle window")
	fs.DurationVar(&s.idle, "idle", 60*time.Second, "idle window (CPU, requests, passes, heartbeats); at least the 30 s heartbeat interval")
	fs.StringVar(&s.cpuProfile, "cpuprofile", "", "write a CPU profile of the last run's idle window to this file")
	fs.StringVar(&s.memProfile, "memprofile", "", "write a heap profile at the end of the last run's idle window to this file")
	fs.BoolVar(&s.serveCluster, "serve-cluster", false, "internal: serve the fake cluster and print its addresses")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	for _, f := range strings.Split(*consumers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return s, fmt.Errorf("-consumers %q: want positive counts separated by commas", *consumers)
		}
		s.consumers = append(s.consumers, n)
	}
	if s.topics < 1 || s.queues < 1 || s.brokers < 1 {
		return s, errors.New("-topics, -queues and -brokers must be positive")
	}
	return s, nil
}

func topicNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ScaleTopic%03d", i)
	}
	return out
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	s, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if s.serveCluster {
		return serveCluster(s, stdin, stdout)
	}
	ctx := context.Background()
	child, ns, ctl, err := startCluster(args, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = child.close() }()
	defer ctl.Close()
	requests := func(ctx context.Context) (map[int32]int, error) {
		byServer, err := ctl.Requests(ctx)
		return scale.SumRequests(byServer), err
	}

	var results []scale.Result
	for _, n := range s.consumers {
		fmt.Fprintf(stderr, "scale: %d consumers of %d topics × %d queues × %d brokers\n", n, s.topics, s.queues, s.brokers)
		cfg := scale.Config{NameServer: ns, Topics: topicNames(s.topics), Consumers: n,
			GroupPrefix: fmt.Sprintf("scale-%d", n), Settle: s.settle, Idle: s.idle, Requests: requests, Progress: stderr}
		last := n == s.consumers[len(s.consumers)-1]
		if last && s.cpuProfile != "" {
			cfg.IdleStarts = func() error { return startCPUProfile(s.cpuProfile) }
		}
		res, stop, err := scale.Run(ctx, cfg)
		if last && s.cpuProfile != "" {
			pprof.StopCPUProfile()
		}
		if err == nil && last && s.memProfile != "" {
			err = writeHeapProfile(s.memProfile)
		}
		if err != nil {
			return err
		}
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		err = stop(sctx)
		cancel()
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	writeTable(stdout, s, results)
	return nil
}

func startCPUProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return pprof.StartCPUProfile(f) // the file is closed when the process exits
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

// child is the cluster's process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func (c *child) close() error {
	_ = c.stdin.Close() // the child closes its cluster and exits
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		return <-done
	}
}

// startCluster runs this binary with -serve-cluster and reads the addresses it prints.
func startCluster(args []string, stderr io.Writer) (*child, string, *control.Client, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", nil, err
	}
	cmd := exec.Command(self, append(slices.Clone(args), "-serve-cluster")...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", nil, err
	}
	c := &child{cmd: cmd, stdin: stdin}
	var ns, url string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "namesrv":
			ns = f[1]
		case len(f) == 2 && f[0] == "control":
			url = f[1]
		case len(f) == 1 && f[0] == "ready":
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return c, ns, control.NewClient(url), nil
		}
	}
	_ = c.close()
	return nil, "", nil, fmt.Errorf("the cluster process ended before it was ready: %v", sc.Err())
}

// serveCluster is the child: a fake cluster with the topics, and its control endpoint,
// until stdin closes.
func serveCluster(s settings, stdin io.Reader, stdout io.Writer) error {
	opts := []fakebroker.Opt{fakebroker.WithBrokers(s.brokers)}
	for _, t := range topicNames(s.topics) {
		opts = append(opts, fakebroker.WithTopic(t, s.queues))
	}
	c, err := fakebroker.NewCluster(opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: control.NewHandler(c), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintf(stdout, "namesrv %s\ncontrol http://%s\nready\n", c.NameServerAddr(), ln.Addr())
	_, _ = io.Copy(io.Discard, stdin) // until the parent closes it
	return nil
}

func writeTable(w io.Writer, s settings, results []scale.Result) {
	fmt.Fprintf(w, "%d topics × %d queues × %d brokers, fake cluster in another process; %s/%s, %d CPUs, %s\n\n",
		s.topics, s.queues, s.brokers, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Fprintln(w, "| consumers | queues each | Start (each) | first rebalance pass | steady pass | heartbeat | goroutines | RSS | heap in use | idle CPU | idle requests/s |")
	fmt.Fprintln(w, "|---:|---:|---|---|---|---|---:|---:|---:|---:|---|")
	for _, r := range results {
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s, %s | %d (+%.1f each) | %.1f MB (+%.1f) | %.1f MB | %.2f %% of a core | %s |\n",
			r.Consumers, r.Queues, spread(r.Start), spread(r.FirstPass), spread(r.Passes),
			kib(r.HeartbeatBytes), spread(r.Heartbeats), r.Goroutines, r.GoroutinesPerConsumer(),
			mb(r.RSS), mb(r.RSS-r.RSSBefore), mb(int64(r.HeapInuse)), 100*r.IdleCPU, requests(r.IdleRequests))
	}
}

// spread is "median (min–max)" of ds, or the one value, or "–".
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "–"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	round := func(d time.Duration) time.Duration {
		if d > 10*time.Millisecond {
			return d.Round(time.Millisecond)
		}
		return d.Round(10 * time.Microsecond)
	}
	if len(s) == 1 {
		return round(s[0]).String()
	}
	return fmt.Sprintf("%v (%v–%v)", round(s[len(s)/2]), round(s[0]), round(s[len(s)-1]))
}

func kib(n int) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }

func mb(n int64) float64 { return float64(n) / 1e6 }

// requests names the busiest request codes per second.
func requests(m map[int32]float64) string {
	if len(m) == 0 {
		return "0"
	}
	total := 0.0
	codes := scale.Codes(m)
	slices.SortFunc(codes, func(a, b int32) int { return int(m[b]*100) - int(m[a]*100) })
	var parts []string
	for i, c := range codes {
		total += m[c]
		if i < 3 {
			parts = append(parts, fmt.Sprintf("%s %.1f", codeName(c), m[c]))
		}
	}
	return fmt.Sprintf("%.1f (%s)", total, strings.Join(parts, ", "))
}

func codeName(c int32) string {
	switch c {
	case fakebroker.RequestPullMessage:
		return "pull"
	case fakebroker.RequestHeartBeat:
		return "heartbeat"
	case fakebroker.RequestGetRouteInfoByTopic:
		return "route"
	case fakebroker.RequestGetConsumerListByGroup:
		return "member list"
	case fakebroker.RequestUpdateConsumerOffset:
		return "offset"
	case fakebroker.RequestQueryConsumerOffset:
		return "offset query"
	}
	return strconv.Itoa(int(c))
}
