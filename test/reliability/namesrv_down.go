package reliability

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// nameServerDownParams size scenario H.
type nameServerDownParams struct {
	messages  int
	consumers int
	delay     time.Duration
	firstAt   time.Duration // consumption before the outage
	down      time.Duration
	poll      time.Duration // the consumers' route poll (WithPollNameServerInterval)
}

func nameServerDownParamsFor(full bool) nameServerDownParams {
	if full { // issue 15: every name server down for 60 s, the default 30 s route poll
		return nameServerDownParams{messages: 150000, consumers: 2, delay: 20 * time.Millisecond,
			firstAt: 10 * time.Second, down: 60 * time.Second, poll: 30 * time.Second}
	}
	// A shorter route poll, so a refresh meets the shorter outage.
	return nameServerDownParams{messages: 24000, consumers: 2, delay: 20 * time.Millisecond,
		firstAt: 3 * time.Second, down: 6 * time.Second, poll: 2 * time.Second}
}

// nameServerRefresh is the target for H: once a name server answers again, each consumer
// has said so (and refreshed its routes) within this long.
const nameServerRefresh = 3 * time.Second

// Log lines of internal/client's name-server outage (namesrv_outage.go).
const (
	logOutageStart = `"no name server answers; consuming on the routes already known"`
	logOutageStill = `"name servers still unreachable; consuming on the routes already known"`
	logOutageEnd   = `"a name server answers again; refreshing routes"`
)

// runH: the (only) name server is stopped during consumption and started again. The
// consumers go on consuming every queue with the routes they know, warn once (and at
// most once a minute while it lasts), notice the name server's return within about a
// second, and neither lose nor repeat a message.
func runH(ctx context.Context, e *env) error {
	p := nameServerDownParamsFor(e.cfg.Full)
	ids, err := e.startGroup(ctx, 4, p.messages, p.consumers, "-delay", p.delay.String(), "-poll-interval", p.poll.String())
	if err != nil {
		return err
	}
	if err := sleepCtx(ctx, p.firstAt); err != nil {
		return err
	}
	downAt := time.Now()
	if err := e.cl.NameServer(ctx, "stop"); err != nil {
		return err
	}
	e.progressf("name server stopped")
	if err := sleepCtx(ctx, p.down); err != nil {
		return err
	}
	if err := e.cl.NameServer(ctx, "start"); err != nil {
		return err
	}
	upAt := time.Now()
	e.progressf("name server started again")
	if err := e.waitDone(ctx, len(ids), nil); err != nil {
		return err
	}
	if err := e.finish(ids, ""); err != nil {
		return err
	}
	e.notef("%d consumers over 2 brokers × 4 queues, listener %v, route poll %v; the name server down %v",
		p.consumers, p.delay, p.poll, p.down)
	e.target("0 duplicates", e.res.Duplicates == 0, "%d duplicates; by cause: %v", e.res.Duplicates, e.dupCauses(""))

	// Consumption went on: every broker's queues were consumed in the outage's second
	// half, with routes no name server could confirm.
	half := downAt.Add(p.down / 2)
	var during []string
	met := true
	for _, b := range e.cl.brokers {
		n := e.coll.countBetween(b, half, upAt)
		during = append(during, fmt.Sprintf("%s %d", b, n))
		met = met && n > 0
	}
	e.target("consumption went on while the name server was down", met,
		"messages consumed in the outage's second half (%v): %s", upAt.Sub(half).Round(time.Second), strings.Join(during, ", "))

	maxWarnings := 1 + int(math.Floor(p.down.Seconds()/60))
	for _, cp := range e.consumers {
		ev, err := outageEvents(cp.logPath)
		if err != nil {
			return err
		}
		e.target(cp.name+": warnings rate-limited", ev.warnings >= 1 && ev.warnings <= maxWarnings,
			"%d warnings for a %v outage (want 1 to %d: one when it starts, one a minute while it lasts)", ev.warnings, p.down, maxWarnings)
		if ev.endAt.IsZero() {
			e.target(fmt.Sprintf("%s: routes refreshed within %v of the name server's return", cp.name, nameServerRefresh), false,
				"no %s line in %s", logOutageEnd, cp.logPath)
			continue
		}
		took := ev.endAt.Sub(upAt)
		e.target(fmt.Sprintf("%s: routes refreshed within %v of the name server's return", cp.name, nameServerRefresh),
			took <= nameServerRefresh, "a name server answered it %v after the name server started (route poll %v)", took.Round(time.Millisecond), p.poll)
	}
	return nil
}

// outageStats is what a consumer's log says of name-server outages.
type outageStats struct {
	warnings int       // outage warnings: when it began, and while it lasted
	endAt    time.Time // the last "answers again"
}

// outageEvents reads a consumer's log for the name-server outage lines.
func outageEvents(logPath string) (outageStats, error) {
	var st outageStats
	f, err := os.Open(logPath)
	if err != nil {
		return st, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, logOutageStart), strings.Contains(line, logOutageStill):
			st.warnings++
		case strings.Contains(line, logOutageEnd):
			at, _, _ := strings.Cut(line, " ")
			t, err := time.Parse(time.RFC3339Nano, at)
			if err != nil {
				return st, fmt.Errorf("%s: %q: %w", logPath, line, err)
			}
			st.endAt = t
		}
	}
	return st, sc.Err()
}
