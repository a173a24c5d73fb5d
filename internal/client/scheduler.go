package client

import (
	"context"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
)

// schedule is the Instance's one goroutine: it refreshes routes and sends heartbeats on
// their intervals, and at once when asked (RequestRouteRefresh, HeartbeatSoon), polls
// the routes that lost a broker every second, and fetches the name-server list from the
// address service, if there is one.
func (i *Instance) schedule() {
	defer close(i.done)
	ctx := i.ctx

	routes := time.NewTicker(i.cfg.RouteInterval)
	defer routes.Stop()
	heartbeat := time.NewTicker(i.cfg.HeartbeatInterval)
	defer heartbeat.Stop()
	var addrService <-chan time.Time // nil (never ready) with a fixed list
	if i.addrs != nil {
		t := time.NewTicker(i.cfg.AddrServiceInterval)
		defer t.Stop()
		addrService = t.C
	}
	// lost polls the topics whose route lost a broker (route_lost.go); armed only while
	// there are some, so an idle client with healthy routes keeps just its two tickers.
	lost := time.NewTimer(lostBrokerPoll)
	defer lost.Stop()
	lost.Stop()
	armLost := func() {
		if len(i.topicsMissingBrokers(time.Now())) > 0 {
			lost.Reset(lostBrokerPoll)
		}
	}
	// outage polls the routes every nsOutagePoll while no name server answers, so they
	// are fresh within about a second of one's return (namesrv_outage.go).
	outage := time.NewTimer(nsOutagePoll)
	defer outage.Stop()
	outage.Stop()
	armOutage := func() {
		if i.nameServersDown() {
			outage.Reset(nsOutagePoll)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-routes.C:
			i.refreshRoutes(ctx)
			armLost()
			armOutage()
		case <-i.refresh:
			i.refreshRoutes(ctx)
			armLost()
			armOutage()
		case <-outage.C:
			i.refreshRoutes(ctx)
			armLost()
			armOutage()
		case <-lost.C:
			i.refreshLostRoutes(ctx)
			armLost()
			armOutage()
		case <-heartbeat.C:
			i.heartbeat(ctx)
		case <-i.kick:
			i.heartbeat(ctx)
		case <-addrService:
			i.fetchNameServers(ctx)
		}
	}
}

// refreshRoutes fetches every route. The warning names the topics the name servers
// refused; an outage has warnings of its own (namesrv_outage.go).
func (i *Instance) refreshRoutes(ctx context.Context) {
	if err, _ := i.refreshTopics(ctx, i.topicsInUse()); err != nil && ctx.Err() == nil && logging.Enabled(i.log, logging.LevelWarn) {
		i.log.Log(logging.LevelWarn, "route refresh failed", "err", err)
	}
}

func (i *Instance) heartbeat(ctx context.Context) {
	if _, err := i.SendHeartbeat(ctx); err != nil && ctx.Err() == nil && logging.Enabled(i.log, logging.LevelWarn) {
		i.log.Log(logging.LevelWarn, "heartbeat failed", "err", err)
	}
}
