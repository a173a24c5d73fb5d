package client

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// MasterID is the broker id of a master.
const MasterID int64 = 0

// routeTable holds the routes of the topics in use and the broker addresses they name.
// It is guarded by Instance.mu.
type routeTable struct {
	topics  map[string]*protocol.TopicRouteData
	brokers map[string]map[int64]string     // broker name → broker id → address
	lost    map[string]map[string]time.Time // topic → brokers its route lost → since (route_lost.go)
}

func newRouteTable() routeTable {
	return routeTable{topics: make(map[string]*protocol.TopicRouteData), brokers: make(map[string]map[int64]string),
		lost: make(map[string]map[string]time.Time)}
}

// rebuildBrokers recomputes the broker address table from every route, so brokers no
// route names any more are forgotten (Java's cleanOfflineBroker).
func (t *routeTable) rebuildBrokers() {
	brokers := make(map[string]map[int64]string)
	for _, r := range t.topics {
		for _, bd := range r.BrokerDatas {
			m := brokers[bd.BrokerName]
			if m == nil {
				m = make(map[int64]string)
				brokers[bd.BrokerName] = m
			}
			maps.Copy(m, bd.BrokerAddrs)
		}
	}
	t.brokers = brokers
}

// UpdateTopicRoute fetches topic's route from a name server and keeps it. It reports
// whether the route changed; consumers of the topic are told when it did. A topic the
// name server does not know gives an error matching protocol.ResponseCodeError(17).
func (i *Instance) UpdateTopicRoute(ctx context.Context, topic string) (bool, error) {
	if i.closed() {
		return false, ErrClosed
	}
	i.routeMu.Lock()
	defer i.routeMu.Unlock()
	req := &protocol.GetRouteInfoRequest{Topic: topic, AcceptStandardJSONOnly: true}
	var sent *remoting.Command
	resp, addr, err := i.invokeNameServer(ctx, func() *remoting.Command {
		sent = remoting.NewRequest(protocol.RequestGetRouteInfoByTopic, req.Encode(), nil)
		return sent
	})
	if err != nil {
		return false, fmt.Errorf("client: route of topic %s: %w", topic, err)
	}
	if resp.Code != protocol.ResponseSuccess {
		return false, fmt.Errorf("client: route of topic %s: %w", topic, protocol.NewBrokerError(addr, sent, resp))
	}
	route := new(protocol.TopicRouteData)
	if err := route.Decode(resp.Body); err != nil {
		return false, fmt.Errorf("client: route of topic %s from name server %s (code %d, opaque %d): %w", topic, addr, resp.Code, resp.Opaque, err)
	}
	normalizeRoute(route)

	i.mu.Lock()
	old := i.routes.topics[topic]
	changed := old == nil || !reflect.DeepEqual(old, route)
	if changed {
		i.routes.topics[topic] = route
		i.routes.rebuildBrokers()
		if old != nil {
			i.noteLostBrokers(topic, old.BrokerNames(), route.BrokerNames(), time.Now())
		}
	}
	i.mu.Unlock()

	if changed {
		if logging.Enabled(i.log, logging.LevelInfo) {
			i.log.Log(logging.LevelInfo, "topic route changed", "topic", topic, "nameServer", addr, "queues", len(route.ReadableQueues(topic)))
		}
		for _, c := range i.consumerList() {
			if subscribes(c, topic) {
				c.OnRouteChanged(topic)
			}
		}
	}
	return changed, nil
}

// normalizeRoute sorts a route's lists so routes can be compared.
func normalizeRoute(r *protocol.TopicRouteData) {
	slices.SortFunc(r.QueueDatas, func(a, b protocol.QueueData) int { return strings.Compare(a.BrokerName, b.BrokerName) })
	slices.SortFunc(r.BrokerDatas, func(a, b protocol.BrokerData) int { return strings.Compare(a.BrokerName, b.BrokerName) })
	if len(r.FilterServerTable) == 0 {
		r.FilterServerTable = nil
	}
}

func subscribes(c Consumer, topic string) bool {
	for _, sd := range c.ConsumerData().SubscriptionDataSet {
		if sd.Topic == topic {
			return true
		}
	}
	return false
}

// Queues returns the readable queues of topic in its latest route, sorted as Java sorts
// them, and whether a route is known.
func (i *Instance) Queues(topic string) ([]message.Queue, bool) {
	i.mu.RLock()
	r, ok := i.routes.topics[topic]
	i.mu.RUnlock()
	if !ok {
		return nil, false
	}
	qs := r.ReadableQueues(topic)
	slices.SortFunc(qs, message.Queue.Compare)
	return qs, true
}

// WritableQueues returns the writable queues of topic in its latest route.
func (i *Instance) WritableQueues(topic string) ([]message.Queue, bool) {
	i.mu.RLock()
	r, ok := i.routes.topics[topic]
	i.mu.RUnlock()
	if !ok {
		return nil, false
	}
	qs := r.WritableQueues(topic)
	slices.SortFunc(qs, message.Queue.Compare)
	return qs, true
}

// FindBrokerAddr returns the address of brokerName's node brokerID, as Java's
// findBrokerAddressInSubscribe does: the node asked for; for a slave id missing, the
// next id; otherwise, unless onlyThisBroker, any node of the broker (the master first).
// slave reports whether the address is not the master's.
func (i *Instance) FindBrokerAddr(brokerName string, brokerID int64, onlyThisBroker bool) (addr string, slave bool, found bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	nodes := i.routes.brokers[brokerName]
	if len(nodes) == 0 {
		return "", false, false
	}
	if a, ok := nodes[brokerID]; ok {
		return a, brokerID != MasterID, true
	}
	if brokerID != MasterID {
		if a, ok := nodes[brokerID+1]; ok {
			return a, true, true
		}
	}
	if onlyThisBroker {
		return "", false, false
	}
	if a, ok := nodes[MasterID]; ok {
		return a, false, true
	}
	ids := slices.Sorted(maps.Keys(nodes))
	return nodes[ids[0]], true, true
}

// masterAddr returns brokerName's master address, fetching topic's route once when the
// broker is unknown.
func (i *Instance) masterAddr(ctx context.Context, topic, brokerName string) (string, error) {
	if addr, _, ok := i.FindBrokerAddr(brokerName, MasterID, true); ok {
		return addr, nil
	}
	if _, err := i.UpdateTopicRoute(ctx, topic); err != nil {
		return "", err
	}
	if addr, _, ok := i.FindBrokerAddr(brokerName, MasterID, true); ok {
		return addr, nil
	}
	return "", fmt.Errorf("client: no master address for broker %s (topic %s)", brokerName, topic)
}

// mastersOfTopic returns the master addresses (any node's when a broker has no master)
// of the brokers serving topic, fetching the route once when none is known.
func (i *Instance) mastersOfTopic(ctx context.Context, topic string) ([]string, error) {
	masters, err := i.topicMasters(ctx, topic)
	if err != nil {
		return nil, err
	}
	addrs := make([]string, len(masters))
	for k, m := range masters {
		addrs[k] = m.Addr
	}
	return addrs, nil
}

// topicMasters returns the name and master address (any node's when a broker has no
// master) of each broker serving topic, in name order, fetching the route once when
// none is known.
func (i *Instance) topicMasters(ctx context.Context, topic string) ([]ConfigCheck, error) {
	pick := func() []ConfigCheck {
		i.mu.RLock()
		defer i.mu.RUnlock()
		r, ok := i.routes.topics[topic]
		if !ok {
			return nil
		}
		var out []ConfigCheck // normalizeRoute sorted the brokers by name
		for _, bd := range r.BrokerDatas {
			addr, ok := bd.BrokerAddrs[MasterID]
			if !ok {
				addr, ok = bd.AnyAddr()
			}
			if ok {
				out = append(out, ConfigCheck{BrokerName: bd.BrokerName, Addr: addr})
			}
		}
		return out
	}
	if out := pick(); len(out) > 0 {
		return out, nil
	}
	if _, err := i.UpdateTopicRoute(ctx, topic); err != nil {
		return nil, err
	}
	if out := pick(); len(out) > 0 {
		return out, nil
	}
	return nil, fmt.Errorf("client: no broker serves topic %s", topic)
}

// brokerAddrs returns every known broker address.
func (i *Instance) brokerAddrs() []string {
	i.mu.RLock()
	defer i.mu.RUnlock()
	var out []string
	for _, nodes := range i.routes.brokers {
		for _, a := range nodes {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// topicsInUse returns the topics of every registered consumer's subscriptions.
func (i *Instance) topicsInUse() []string {
	var out []string
	for _, c := range i.consumerList() {
		for _, sd := range c.ConsumerData().SubscriptionDataSet {
			out = append(out, sd.Topic)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// RefreshRoutes fetches the routes of every topic in use. It returns the joined errors of
// the topics that could not be fetched; when no name server answered, it stops there
// (see refreshTopics) with an error wrapping ErrNoNameServerAnswered.
func (i *Instance) RefreshRoutes(ctx context.Context) error {
	err, unanswered := i.refreshTopics(ctx, i.topicsInUse())
	return joinErrs(slices.DeleteFunc([]error{err, unanswered}, func(e error) bool { return e == nil }))
}

// RequestRouteRefresh asks the scheduler to refresh routes soon, without waiting.
func (i *Instance) RequestRouteRefresh() {
	select {
	case i.refresh <- struct{}{}:
	default:
	}
}
