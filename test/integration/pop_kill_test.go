package integration

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
)

// helperEnv makes the test binary, started again by TestPopMemberKilled, run one
// consumer in TestPopMemberHelper until it is killed.
const helperEnv = "RMQPUSH_INTEGRATION_MEMBER"

// TestPopMemberHelper is the member TestPopMemberKilled kills: a consumer of the group
// that prints "got <body>" for each message and never returns from a message whose body
// starts with "hold-", so at its death it holds messages it has not acked.
func TestPopMemberHelper(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("run by TestPopMemberKilled")
	}
	var namesrv, group, topic, mode string
	_, err := fmt.Sscan(spec, &namesrv, &group, &topic, &mode)
	require.NoError(t, err)
	opts := []consumer.Option{consumer.WithNameServers(namesrv), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithRebalanceInterval(time.Second), consumer.WithHeartbeatInterval(time.Second),
		consumer.WithLongPollTime(200 * time.Millisecond), consumer.WithConsumeGoroutineNums(4),
		consumer.WithInstanceName("victim"), consumer.WithClientRebalance(mode == "PULL-CLIENT")}
	if mode == "POP" {
		opts = append(opts, consumer.WithPopInvisibleTime(5*time.Second))
	}
	var out sync.Mutex
	pc, err := consumer.NewPushConsumer(group, opts...)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe(topic, consumer.All()))
	require.NoError(t, pc.RegisterListener(consumer.ConcurrentlyFunc(func(ctx context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
		for _, m := range msgs {
			out.Lock()
			fmt.Printf("got %s\n", m.Body)
			out.Unlock()
			if strings.HasPrefix(string(m.Body), "hold-") {
				<-ctx.Done() // until killed
			}
		}
		return consumer.ConsumeSuccess
	})))
	require.NoError(t, pc.Start(context.Background()))
	select {} // until killed
}

// A member killed (SIGKILL) while it holds messages: in POP mode the other members
// go on consuming every queue at once, and its unacked messages come back to them after
// their invisible time; in pull mode its queues wait for the rebalance and the takeover
// grace, and its uncommitted messages come back from the queues' offsets. Nothing is
// lost in either.
func TestPopMemberKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	for _, mode := range []string{"POP", "PULL-CLIENT"} {
		t.Run(mode, func(t *testing.T) { memberKilled(t, mode) })
	}
}

func memberKilled(t *testing.T, mode string) {
	group, topic := "kill-g-"+strings.ToLower(mode), "kill-t"
	c := popCluster(t, group, topic, 4)
	if mode != "POP" {
		require.NoError(t, c.SetConsumeMode(group, topic, "PULL", 0))
	}
	got := newTally()
	var lastMu sync.Mutex
	consumedAt := map[string]time.Time{}
	how := map[string]string{} // for a failure's message
	record := func(msgs []*message.Ext) {
		got.add(msgs)
		lastMu.Lock()
		for _, m := range msgs {
			consumedAt[string(m.Body)] = time.Now()
			how[string(m.Body)] = fmt.Sprintf("queue %d, reconsumed %d, %s", m.QueueID, m.ReconsumeTimes, m.Property("POP_CK"))
		}
		lastMu.Unlock()
	}
	opts := popOptions(c, consumer.WithClientRebalance(mode == "PULL-CLIENT"), consumer.WithPopInvisibleTime(5*time.Second))
	var survivors []*consumer.PushConsumer
	for i := range 2 {
		survivors = append(survivors, startConsumer(t, group, topic, consumer.All(), append(opts, consumer.WithInstanceName(fmt.Sprint("s", i))),
			func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
				record(msgs)
				time.Sleep(time.Millisecond)
				return consumer.ConsumeSuccess
			}))
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestPopMemberHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+strings.Join([]string{c.NameServerAddr(), group, topic, mode}, " "))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	victimGot := make(chan string, 1<<16)
	readDone := make(chan struct{})
	go func() { // owned here: ends when the killed process's pipe closes
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if body, ok := strings.CutPrefix(sc.Text(), "got "); ok {
				victimGot <- body
			}
		}
	}()
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		<-readDone
	}()
	waitFor(t, 10*time.Second, "the victim in the group", func() bool { return len(c.Brokers()[0].Clients(group)) == 3 })

	// Rounds of messages the victim holds when it gets them, until it holds four: in
	// pull mode it gets some only once a rebalance gave it queues and their takeover
	// grace passed (a second or two; a loaded machine may take longer, which a fixed
	// sleep here once missed).
	var want []string
	held := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for round := 0; len(held) < 4 && time.Now().Before(deadline); round++ {
		want = append(want, produce(t, c, topic, fmt.Sprintf("hold-r%d", round), 100, "")...)
		roundEnd := time.Now().Add(2 * time.Second)
		for len(held) < 4 && time.Now().Before(roundEnd) {
			select {
			case b := <-victimGot:
				held[b] = true
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	require.GreaterOrEqual(t, len(held), 4, "the victim holds messages")

	require.NoError(t, cmd.Process.Kill()) // SIGKILL
	killed := time.Now()
	// The broker sees the connection close (as Netty's channel-inactive event); until
	// then a pop the victim left waiting may still be answered to the dead socket, and
	// what it takes stays invisible for the whole invisible time, as on a real broker.
	waitFor(t, 5*time.Second, "the broker to see the victim's connection close", func() bool { return len(c.Brokers()[0].Clients(group)) == 2 })
	after := produce(t, c, topic, "after", 200, "")
	waitFor(t, 20*time.Second, "every message produced after the kill", func() bool {
		for _, b := range after {
			if got.count(b) == 0 {
				return false
			}
		}
		return true
	})
	lastMu.Lock()
	var lastAfter time.Time
	var lastHow string
	for _, b := range after {
		if at := consumedAt[b]; at.After(lastAfter) {
			lastAfter, lastHow = at, b+": "+how[b]
		}
	}
	lastMu.Unlock()
	waitFor(t, 30*time.Second, "the victim's messages back", func() bool {
		for b := range held {
			if got.count(b) == 0 {
				return false
			}
		}
		return got.distinct() == len(want)+len(after)
	}, func() string { return fmt.Sprint("distinct ", got.distinct()) })
	lastMu.Lock()
	var lastHeld time.Time
	for b := range held {
		if at := consumedAt[b]; at.After(lastHeld) {
			lastHeld = at
		}
	}
	lastMu.Unlock()
	for _, pc := range survivors {
		shutdown(t, pc)
	}
	missing, dups := got.check(append(want, after...))
	t.Logf("%s: victim held %d messages; all %d produced after the kill consumed %v after it; the held ones back %v after it; %d lost, %d duplicates among the survivors",
		mode, len(held), len(after), lastAfter.Sub(killed).Round(time.Millisecond), lastHeld.Sub(killed).Round(time.Millisecond), missing, dups)
	require.Zero(t, missing)
	if mode == "POP" {
		require.Less(t, lastAfter.Sub(killed), 5*time.Second, "no queue stalls: new messages are consumed before the victim's invisible time ends (the last: %s)", lastHow)
		require.GreaterOrEqual(t, lastHeld.Sub(killed), 4*time.Second, "held messages come back after their invisible time")
	}
}
