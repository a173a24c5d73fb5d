package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
)

// ErrNoNameServerAnswered is wrapped by the error of a name-server call that none of the
// name servers answered: each refused, lost or timed out the call.
var ErrNoNameServerAnswered = errors.New("client: no name server answered")

// While no name server answers, consumption goes on with the routes already known (the
// brokers are asked directly for everything else), and:
//
//   - a route refresh stops at the first topic no name server answered for, so an
//     outage costs a round one call per name server, not one per topic and name server
//     (250 topics and two name servers that time out: 6 s, not 25 min, during which
//     the scheduler would send no heartbeat);
//   - the routes are fetched again every nsOutagePoll, so they refresh within about a
//     second of a name server's return rather than at the next RouteInterval;
//   - a warning says so when it starts and at most every nsOutageWarnEvery while it
//     lasts, and an info line when a name server answers again.
const (
	nsOutagePoll      = time.Second
	nsOutageWarnEvery = time.Minute
)

// nsOutage tracks a time when no name server answers.
type nsOutage struct {
	mu     sync.Mutex
	since  time.Time // zero: the last call was answered
	warned time.Time // the last warning
	failed int       // calls no name server answered since
}

// nameServersFailed records a call no name server answered, with its error.
func (i *Instance) nameServersFailed(err error, now time.Time) {
	o := &i.nsOutage
	o.mu.Lock()
	first := o.since.IsZero()
	if first {
		o.since = now
	}
	o.failed++
	warn := first || now.Sub(o.warned) >= nsOutageWarnEvery
	if warn {
		o.warned = now
	}
	since, failed := o.since, o.failed
	o.mu.Unlock()
	if !warn || !logging.Enabled(i.log, logging.LevelWarn) {
		return
	}
	addrs := strings.Join(i.nameServer.order(), ";")
	if first {
		i.log.Log(logging.LevelWarn, "no name server answers; consuming on the routes already known", "nameServers", addrs, "err", err)
		return
	}
	i.log.Log(logging.LevelWarn, "name servers still unreachable; consuming on the routes already known",
		"nameServers", addrs, "for", now.Sub(since).Round(time.Second).String(), "failedCalls", failed, "err", err)
}

// nameServerAnswered records an answer from addr, ending an outage.
func (i *Instance) nameServerAnswered(addr string, now time.Time) {
	o := &i.nsOutage
	o.mu.Lock()
	since, failed := o.since, o.failed
	o.since, o.failed = time.Time{}, 0
	o.mu.Unlock()
	if !since.IsZero() && logging.Enabled(i.log, logging.LevelInfo) {
		i.log.Log(logging.LevelInfo, "a name server answers again; refreshing routes", "nameServer", addr,
			"after", now.Sub(since).Round(time.Millisecond).String(), "failedCalls", failed)
	}
}

// nameServersDown reports whether the last name-server call went unanswered.
func (i *Instance) nameServersDown() bool {
	i.nsOutage.mu.Lock()
	defer i.nsOutage.mu.Unlock()
	return !i.nsOutage.since.IsZero()
}

// refreshTopics fetches the routes of topics, stopping at the first that no name server
// answered for: the others would fail the same way, each after a timeout per name
// server. It returns the joined errors of the topics the name servers answered with an
// error (a topic that does not exist), and unanswered, the error that stopped it.
func (i *Instance) refreshTopics(ctx context.Context, topics []string) (err, unanswered error) {
	var errs []error
	for k, topic := range topics {
		_, err := i.UpdateTopicRoute(ctx, topic)
		switch {
		case err == nil:
		case errors.Is(err, ErrNoNameServerAnswered):
			if rest := len(topics) - k - 1; rest > 0 {
				err = fmt.Errorf("%w (the routes of %d more topics kept, not asked for)", err, rest)
			}
			return joinErrs(errs), err
		default:
			errs = append(errs, err)
		}
	}
	return joinErrs(errs), nil
}
