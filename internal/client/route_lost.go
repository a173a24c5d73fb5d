package client

import (
	"context"
	"slices"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
)

// A topic whose route lost a broker it had (stopped, crashed, cut off) is polled every
// lostBrokerPoll, not every RouteInterval, for lostBrokerPollFor, so its queues resume
// within about a second of the broker's return rather than up to 30 s later. A broker
// gone for longer is taken as decommissioned: its topics go back to the normal poll.
const (
	lostBrokerPoll    = time.Second
	lostBrokerPollFor = 10 * time.Minute
)

// noteLostBrokers records, for a route that changed from old to route, the brokers it
// lost and those it has again. i.mu is held.
func (i *Instance) noteLostBrokers(topic string, old, route []string, now time.Time) {
	lost := i.routes.lost[topic]
	for _, b := range old {
		if !slices.Contains(route, b) {
			if lost == nil {
				lost = make(map[string]time.Time)
				i.routes.lost[topic] = lost
			}
			if _, ok := lost[b]; !ok {
				lost[b] = now
				i.RequestRouteRefresh() // the scheduler then polls it every lostBrokerPoll
			}
		}
	}
	for _, b := range route {
		delete(lost, b)
	}
	if len(lost) == 0 {
		delete(i.routes.lost, topic)
	}
}

// topicsMissingBrokers returns the topics whose route lacks a broker it had less than
// lostBrokerPollFor ago, forgetting the brokers lost for longer.
func (i *Instance) topicsMissingBrokers(now time.Time) []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	var out []string
	for topic, lost := range i.routes.lost {
		for b, since := range lost {
			if now.Sub(since) >= lostBrokerPollFor {
				delete(lost, b)
			}
		}
		if len(lost) == 0 {
			delete(i.routes.lost, topic)
			continue
		}
		out = append(out, topic)
	}
	slices.Sort(out)
	return out
}

// refreshLostRoutes fetches the routes of the topics missing a broker.
func (i *Instance) refreshLostRoutes(ctx context.Context) {
	if err, _ := i.refreshTopics(ctx, i.topicsMissingBrokers(time.Now())); err != nil && ctx.Err() == nil && logging.Enabled(i.log, logging.LevelDebug) {
		// Every second while it lasts: the warning is the regular refresh's.
		i.log.Log(logging.LevelDebug, "route refresh of a topic missing a broker failed", "err", err)
	}
}
