package benchrun

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Workload is one consume-all workload: N messages of Size body bytes.
type Workload struct {
	N    int
	Size int
}

// Name returns e.g. "128B" or "1KiB".
func (w Workload) Name() string {
	if w.Size >= 1024 && w.Size%1024 == 0 {
		return fmt.Sprintf("%dKiB", w.Size/1024)
	}
	return fmt.Sprintf("%dB", w.Size)
}

// Config configures a Run.
type Config struct {
	// NameServer is a real cluster's name server; empty starts the fake cluster.
	NameServer string
	// Broker is, with NameServer, the master address (host:port) topics are created on
	// with UPDATE_AND_CREATE_TOPIC.
	Broker string
	// BinDir holds the built programs; empty: a temporary directory. Build builds them
	// there first (go build, run in the current directory, which must be inside the
	// test/conformance module).
	BinDir string
	Build  bool

	// BrokerPID, with a real cluster on this machine, is its broker's process id: the
	// consume runs then report the broker's CPU per million messages.
	BrokerPID int
	// PullServiceTime, with the fake cluster, makes its broker answer each pull this
	// long after it arrived (fakebroker.WithPullServiceTime): a real broker is not free.
	PullServiceTime time.Duration
	// BusyCore runs a process that keeps one core busy (cmd/benchburn) during the
	// consume and latency scenarios, as a real broker's JVM does on a small machine.
	BusyCore bool
	// WorkerGOMAXPROCS, when positive, is the GOMAXPROCS of every client's worker
	// process (not of the fake cluster's): a service sharing a small machine with its
	// broker may set it so.
	WorkerGOMAXPROCS int
	// AppHeapMiB, when positive, makes every client's worker hold that many MiB of live
	// objects (benchkit.AppHeap), so the collector is paced as in a service with a heap
	// of its own rather than at Go's 4 MB minimum goal.
	AppHeapMiB int

	// Scenarios to run: any of "consume", "latency", "idle".
	Scenarios []string
	// Workloads of the consume scenario.
	Workloads []Workload
	// Runs is the number of runs of each client and setting (3).
	Runs int
	// Ceiling adds a raw-puller run before each round of clients.
	Ceiling bool
	// Tuned adds the tuned settings (pull batch 128, consume batch 32).
	Tuned bool
	// Clients to run: "rmqpush", "peer", "pop" (rmqpush consuming by POP: the fake
	// cluster then answers as RocketMQ 5, and each of its groups is set to POP first),
	// "pop-lent" (the same with consumer.WithLentBodies), "lent" (rmqpush with
	// WithLentBodies), "orderly" (rmqpush with an
	// OrderlyListener), "orderly-lent" (the same with WithLentBodies), or a name in
	// Workers (one whose name begins with "pop" consumes by POP too).
	Clients []string
	// Workers are extra worker programs by client name (e.g. an rmqpush worker built
	// from an older commit, to compare before and after in the same run); they take the
	// flags of package benchkit.
	Workers map[string]string

	LatencyRate     int           // messages per second (2000)
	LatencyDuration time.Duration // measured sending time (30 s)
	LatencyWarmup   time.Duration // sent before, not measured (2 s)
	LatencyRuns     int           // runs per client (1)
	Settle          time.Duration // after a worker's Start, before the producer (3 s)

	IdleQueues int           // 256
	IdleSettle time.Duration // after Start, before the window (10 s)
	IdleWindow time.Duration // 60 s

	// ProfileDir, when set, gets a CPU and an allocation profile of every rmqpush
	// consume run.
	ProfileDir string
	// Traces adds an execution trace of every rmqpush consume run to ProfileDir. It
	// slows the runs: their figures are not for comparing.
	Traces bool
	// WorkerTimeout bounds one worker run (10 min).
	WorkerTimeout time.Duration
	// Log receives progress lines; Out the final tables.
	Log, Out io.Writer
	// Results, when set, receives every worker result as a JSON line.
	Results io.Writer
}

// Default returns the full benchmark's configuration.
func Default() Config {
	return Config{
		Build:           true,
		Scenarios:       []string{"consume", "latency", "idle"},
		Workloads:       []Workload{{N: 1_000_000, Size: 128}, {N: 300_000, Size: 1024}},
		Runs:            3,
		Ceiling:         true,
		Tuned:           true,
		Clients:         []string{"rmqpush", "peer"},
		LatencyRate:     2000,
		LatencyDuration: 30 * time.Second,
		LatencyWarmup:   2 * time.Second,
		LatencyRuns:     1,
		Settle:          3 * time.Second,
		IdleQueues:      256,
		IdleSettle:      10 * time.Second,
		IdleWindow:      60 * time.Second,
		WorkerTimeout:   10 * time.Minute,
		Log:             io.Discard,
		Out:             io.Discard,
	}
}

// RealisticPullServiceTime is the pull service time of the realistic mode: about what a
// real 4.9.8 broker sharing a 2-core machine with its client takes per pull of 32
// messages (issue "Performance on a real broker": a raw puller's cycle of ~0.56 ms per
// queue, loopback and the client's share included).
const RealisticPullServiceTime = 300 * time.Microsecond

func (c *Config) check() error {
	if c.NameServer != "" && c.Broker == "" {
		return errors.New("benchrun: a real name server needs the address of a master to create topics on (-broker)")
	}
	if c.NameServer != "" && c.PullServiceTime > 0 {
		return errors.New("benchrun: -pull-service-time applies to the fake cluster only")
	}
	if c.PullServiceTime < 0 {
		return errors.New("benchrun: the pull service time must not be negative")
	}
	if c.AppHeapMiB < 0 {
		return errors.New("benchrun: the app heap (-app-heap) must not be negative")
	}
	if c.Traces && c.ProfileDir == "" {
		return errors.New("benchrun: execution traces (-traces) go to the profiles directory (-profiles)")
	}
	if c.Runs < 1 || c.LatencyRuns < 1 {
		return errors.New("benchrun: runs must be at least 1")
	}
	for _, cl := range c.Clients {
		_, extra := c.Workers[cl]
		if _, builtin := clientBins[cl]; !extra && !builtin {
			return fmt.Errorf("benchrun: unknown client %q (%s)", cl, ClientNames)
		}
	}
	for _, s := range c.Scenarios {
		if s != "consume" && s != "latency" && s != "idle" {
			return fmt.Errorf("benchrun: unknown scenario %q (consume, latency, idle)", s)
		}
	}
	if c.LatencyRate < 1 || c.IdleQueues < 1 {
		return errors.New("benchrun: the latency rate and the idle queue count must be positive")
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	return nil
}

// clientPop is the client that consumes by POP (cmd/benchpop).
const clientPop = "pop"

// ClientNames lists the built-in clients (Config.Clients), for errors and help.
const ClientNames = "rmqpush, peer, pop (rmqpush consuming by POP), pop-lent (the same, lending bodies), " +
	"lent (rmqpush lending bodies: WithLentBodies), " +
	"orderly (rmqpush with an OrderlyListener), orderly-lent (the same, lending bodies)"

// isPop reports whether a client consumes by POP.
func isPop(client string) bool { return strings.HasPrefix(client, clientPop) }

// pops reports whether a client consumes by POP.
func (c *Config) pops() bool {
	for _, cl := range c.Clients {
		if isPop(cl) {
			return true
		}
	}
	return false
}

func (c *Config) has(scenario string) bool {
	for _, s := range c.Scenarios {
		if s == scenario {
			return true
		}
	}
	return false
}
