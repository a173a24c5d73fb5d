package conformance

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
	"go.uber.org/goleak"
)

// peerLog replaces the peer's process-global logger (rlog keeps one logger for the whole
// process, so ours has to be process-global too): it discards what the peer logs and
// counts the NOTIFY_CONSUMER_IDS_CHANGED requests the peer reports receiving, per
// consumer group.
var peerLog = newPeerLogger()

func TestMain(m *testing.M) {
	rlog.SetLogger(peerLog)
	flag.Parse()
	raiseParallel(8)
	code := m.Run()
	if code == 0 {
		if err := checkFakeGoroutines(5 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(peerGoroutines()...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// raiseParallel lets n tests run at once unless -parallel was given: the tests spend
// their time waiting for the peer's timers (its first offset persist is 10 s after
// Start), not computing, so running them all together keeps the module's run near the
// longest test's instead of the default of GOMAXPROCS at a time.
func raiseParallel(n int) {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if f := flag.Lookup("test.parallel"); f != nil && !set {
		_ = f.Value.Set(fmt.Sprint(n)) // a valid integer: cannot fail
	}
}

// peerGoroutines lists the goroutines rocketmq-client-go leaves running after its
// Shutdown returns, each commented below (its statistics goroutines are issue #1147).
// They are the peer's; what this module asserts about goroutines is that the fake
// broker leaves none (checkFakeGoroutines).
func peerGoroutines() []goleak.Option {
	const c = "github.com/apache/rocketmq-client-go/v2/"
	return []goleak.Option{
		// Statistics: sleep until the next minute, hour and month boundary.
		goleak.IgnoreAnyFunction(c + "consumer.(*statsItemSet).init.func4"),
		goleak.IgnoreAnyFunction(c + "consumer.(*statsItemSet).init.func5"),
		goleak.IgnoreAnyFunction(c + "consumer.(*statsItemSet).init.func6"),
		// The expired-message cleaner: sleeps ConsumeTimeout (15 min) first.
		goleak.IgnoreAnyFunction(c + "consumer.(*pushConsumer).Start.func1.2"),
		// A pull in flight when the consumer shuts down waits for its answer until its
		// 30 s context ends, though Shutdown closed the connection.
		goleak.IgnoreAnyFunction(c + "consumer.(*pushConsumer).pullMessage"),
		// A rebalance started by a NOTIFY_CONSUMER_IDS_CHANGED waits for its consumer-list
		// query until the call's timeout, though Shutdown closed the connection.
		goleak.IgnoreAnyFunction(c + "consumer.(*defaultConsumer).findConsumerList"),
		// An orderly consume loop polls its empty process queue for up to 5 s before it
		// looks at its done channel again.
		goleak.IgnoreAnyFunction(c + "consumer.(*pushConsumer).pullMessage.func1"),
		// The client instance's name-server refresh, heartbeat and offset persist jobs:
		// they sleep 10 s, 1 s and 10 s before they first look at their done channel.
		goleak.IgnoreAnyFunction(c + "internal.(*rmqClient).Start.func1.1"),
		goleak.IgnoreAnyFunction(c + "internal.(*rmqClient).Start.func1.3"),
		goleak.IgnoreAnyFunction(c + "internal.(*rmqClient).Start.func1.4"),
		// A cache janitor the peer's packages start at init, for the whole process.
		goleak.IgnoreTopFunction("github.com/patrickmn/go-cache.(*janitor).Run"),
	}
}

// checkFakeGoroutines waits up to d for every goroutine running rmqpush code (the fake
// broker, and the remoting and message packages under it) to end, and describes those
// left. Goroutines of this package (the peer running our listeners) do not count.
func checkFakeGoroutines(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		left := fakeGoroutines()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the fake broker left %d goroutines after every Cluster.Close:\n\n%s",
				len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(poll)
	}
}

// fakeGoroutines returns the stacks of the goroutines that run, or were created by,
// code of the rmqpush module outside this package.
func fakeGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	const ours, self = "github.com/rmqpush/rmqpush/", "github.com/rmqpush/rmqpush/test/conformance"
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, line := range strings.Split(g, "\n") {
			fn := strings.TrimPrefix(line, "created by ")
			if strings.HasPrefix(fn, ours) && !strings.HasPrefix(fn, self) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// peerLogger is an rlog.Logger that keeps the peer quiet (its error lines are printed
// only when the environment variable CONFORMANCE_PEER_ERRORS is set; fatal ones always)
// and counts the notifications the peer says it received.
type peerLogger struct {
	mu       sync.Mutex
	notified map[string]int // consumer group → NOTIFY_CONSUMER_IDS_CHANGED received
}

func newPeerLogger() *peerLogger { return &peerLogger{notified: make(map[string]int)} }

// notifications returns how many NOTIFY_CONSUMER_IDS_CHANGED requests for group the
// peer's clients have reported receiving (all clients of the process together).
func (l *peerLogger) notifications(group string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.notified[group]
}

func (l *peerLogger) Debug(string, map[string]interface{}) {}

// Info counts the peer's "receive broker's notification to consumer group" line, which
// its NOTIFY_CONSUMER_IDS_CHANGED handler logs before it rebalances
// (internal/client.go, GetOrNewRocketMQClient).
func (l *peerLogger) Info(msg string, fields map[string]interface{}) {
	if !strings.HasPrefix(msg, "receive broker's notification to consumer group") {
		return
	}
	group, _ := fields[rlog.LogKeyConsumerGroup].(string)
	l.mu.Lock()
	l.notified[group]++
	l.mu.Unlock()
}

func (l *peerLogger) Warning(string, map[string]interface{}) {}

func (l *peerLogger) Error(msg string, fields map[string]interface{}) {
	if os.Getenv("CONFORMANCE_PEER_ERRORS") != "" {
		fmt.Fprintf(os.Stderr, "peer error: %s %v\n", msg, fields)
	}
}

func (l *peerLogger) Fatal(msg string, fields map[string]interface{}) {
	fmt.Fprintf(os.Stderr, "peer fatal: %s %v\n", msg, fields)
}

func (l *peerLogger) Level(string) {}

func (l *peerLogger) OutputPath(string) error { return nil }
