package fakebroker

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"time"
)

// Opt configures a Cluster; NewCluster validates them all and names the option at fault.
type Opt func(*config)

// DefaultDelayLevels returns the delay levels of a 4.9.8 broker (messageDelayLevel
// "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"): level n waits
// element n-1. Each call returns a new slice.
func DefaultDelayLevels() []time.Duration {
	return []time.Duration{
		time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute,
		6 * time.Minute, 7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute,
		20 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
	}
}

// Defaults of a 4.9.8 broker and name server.
const (
	DefaultClusterName      = "DefaultCluster"
	DefaultHost             = "127.0.0.1"
	DefaultClientExpiry     = 120 * time.Second // BrokerConfig channelExpiredTimeout
	DefaultLockExpiry       = 60 * time.Second  // RebalanceLockManager REBALANCE_LOCK_MAX_LIVE_TIME
	DefaultHoldCheck        = 5 * time.Second   // PullRequestHoldService's check interval
	DefaultTopicQueueNums   = 8                 // BrokerConfig defaultTopicQueueNums (TBW102)
	DefaultRetryMaxTimes    = 16                // SubscriptionGroupConfig retryMaxTimes
	DefaultMaxMessageSize   = 4 << 20           // MessageStoreConfig maxMessageSize
	DefaultProduceQueueNums = 4                 // queues of a topic Produce creates
)

// topicSpec is a topic created before the cluster starts.
type topicSpec struct {
	name    string
	queues  int
	brokers []string // empty: every broker
	perm    int32
}

type config struct {
	host           string
	clusterName    string
	brokerCount    int
	brokerNames    []string
	brokerPorts    []int
	nsPort         int
	topics         []topicSpec
	autoCreate     bool
	delayLevels    []time.Duration
	clientExpiry   time.Duration
	lockExpiry     time.Duration
	holdCheck      time.Duration
	retryMaxTimes  int32
	maxMessageSize int
	lags           map[int32]Lag // by request code; see WithLag
	propertyFilter bool
	rocketMQ5      bool          // WithRocketMQ5
	popReviveDelay time.Duration // WithPopReviveDelay
	errs           []error
}

func defaultConfig() config {
	return config{
		host:           DefaultHost,
		clusterName:    DefaultClusterName,
		brokerCount:    1,
		autoCreate:     true,
		delayLevels:    DefaultDelayLevels(),
		clientExpiry:   DefaultClientExpiry,
		lockExpiry:     DefaultLockExpiry,
		holdCheck:      DefaultHoldCheck,
		retryMaxTimes:  DefaultRetryMaxTimes,
		maxMessageSize: DefaultMaxMessageSize,
	}
}

func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("fakebroker: "+format, args...))
}

// validName reports whether s matches the 4.9.8 TopicValidator pattern
// ^[%|a-zA-Z0-9_-]+$; topics and broker names must.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '%' || c == '|' || c == '_' || c == '-':
		default:
			return false
		}
	}
	return true
}

// maxQueueNums bounds the queue count of a topic created through options or requests.
const maxQueueNums = 1024

func (c *config) validate() error {
	if len(c.errs) > 0 {
		return errors.Join(c.errs...)
	}
	names := c.names()
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("fakebroker: WithBrokerNames: %q appears twice", n)
		}
		seen[n] = true
	}
	if len(c.brokerPorts) > 0 && len(c.brokerPorts) != len(names) {
		return fmt.Errorf("fakebroker: WithBrokerPorts: %d ports for %d brokers", len(c.brokerPorts), len(names))
	}
	ports := map[int]string{}
	if c.nsPort != 0 {
		ports[c.nsPort] = "the name server"
	}
	for i, p := range c.brokerPorts {
		if p == 0 {
			continue
		}
		if other, dup := ports[p]; dup {
			return fmt.Errorf("fakebroker: WithBrokerPorts: port %d is given to both %s and broker %s", p, other, names[i])
		}
		ports[p] = "broker " + names[i]
	}
	for _, t := range c.topics {
		for _, b := range t.brokers {
			if !seen[b] {
				return fmt.Errorf("fakebroker: WithTopic(%q): unknown broker %q (brokers: %v)", t.name, b, names)
			}
		}
	}
	return nil
}

// names returns the broker names: the given ones, or broker-a, broker-b, ...
func (c *config) names() []string {
	if len(c.brokerNames) > 0 {
		return c.brokerNames
	}
	out := make([]string, c.brokerCount)
	for i := range out {
		out[i] = brokerName(i)
	}
	return out
}

// brokerName returns the default name of broker i: broker-a ... broker-z, broker-aa ...
func brokerName(i int) string {
	s := ""
	for {
		s = string(rune('a'+i%26)) + s
		i = i/26 - 1
		if i < 0 {
			return "broker-" + s
		}
	}
}

// WithBrokers sets the number of brokers (masters), named broker-a, broker-b, ...
// Default 1. Between 1 and 64.
func WithBrokers(n int) Opt {
	return func(c *config) {
		if n < 1 || n > 64 {
			c.fail("WithBrokers(%d): need 1 to 64 brokers", n)
			return
		}
		c.brokerCount = n
		c.brokerNames = nil
	}
}

// WithBrokerNames names the brokers (and sets their number). Names must match
// ^[%|a-zA-Z0-9_-]+$ and be distinct.
func WithBrokerNames(names ...string) Opt {
	return func(c *config) {
		if len(names) < 1 || len(names) > 64 {
			c.fail("WithBrokerNames: need 1 to 64 names, got %d", len(names))
			return
		}
		for _, n := range names {
			if !validName(n) || len(n) > 127 {
				c.fail("WithBrokerNames: %q is not a valid broker name (want ^[%%|a-zA-Z0-9_-]+$, at most 127 bytes)", n)
				return
			}
		}
		c.brokerNames = append([]string(nil), names...)
		c.brokerCount = len(names)
	}
}

// WithBrokerPorts gives each broker a fixed port, in broker order; 0 picks a free one.
// By default every broker gets a free port. The port is kept across Stop and Start.
func WithBrokerPorts(ports ...int) Opt {
	return func(c *config) {
		for _, p := range ports {
			if p < 0 || p > 65535 {
				c.fail("WithBrokerPorts: port %d out of range", p)
				return
			}
		}
		c.brokerPorts = append([]int(nil), ports...)
	}
}

// WithNameServerPort gives the name server a fixed port (default: a free one).
func WithNameServerPort(port int) Opt {
	return func(c *config) {
		if port < 0 || port > 65535 {
			c.fail("WithNameServerPort(%d): out of range", port)
			return
		}
		c.nsPort = port
	}
}

// WithHost sets the IP address every server listens on and advertises (default
// 127.0.0.1). It must be an IP address, not a name: brokers write it into every stored
// message as the store host.
func WithHost(host string) Opt {
	return func(c *config) {
		a, err := netip.ParseAddr(host)
		if err != nil {
			c.fail("WithHost(%q): not an IP address: %v", host, err)
			return
		}
		c.host = a.Unmap().String()
	}
}

// WithClusterName sets the cluster name brokers report in routes and store in the
// CLUSTER property of every message (default "DefaultCluster").
func WithClusterName(name string) Opt {
	return func(c *config) {
		if name == "" {
			c.fail("WithClusterName: empty name")
			return
		}
		c.clusterName = name
	}
}

// WithTopic creates a topic before the cluster starts, with the given number of read and
// write queues (1 to 1024) and read-write permission, on the named brokers or, when none
// are named, on every broker.
func WithTopic(name string, queues int, brokers ...string) Opt {
	return func(c *config) {
		if err := checkTopicSpec(name, queues); err != nil {
			c.fail("WithTopic(%q, %d): %v", name, queues, err)
			return
		}
		c.topics = append(c.topics, topicSpec{name: name, queues: queues, brokers: brokers, perm: permRW})
	}
}

func checkTopicSpec(name string, queues int) error {
	if name == "" || len(name) > 127 || !validName(name) {
		return errors.New("not a valid topic name (want ^[%|a-zA-Z0-9_-]+$, at most 127 bytes)")
	}
	if queues < 1 || queues > maxQueueNums {
		return fmt.Errorf("queue count must be 1 to %d", maxQueueNums)
	}
	return nil
}

// WithAutoCreateTopics turns the broker's autoCreateTopicEnable on (the default) or off.
// On, each broker has TBW102 (8 queues, perm RWX) and creates a topic the first time a
// producer sends to it, with min(defaultTopicQueueNums, 8) queues. Off, a send to an
// unknown topic gets TOPIC_NOT_EXIST.
func WithAutoCreateTopics(on bool) Opt {
	return func(c *config) { c.autoCreate = on }
}

// WithDelayLevels replaces the delay levels (level n waits levels[n-1]); at most 64
// levels, each positive. Tests use it to make retries take milliseconds.
func WithDelayLevels(levels ...time.Duration) Opt {
	return func(c *config) {
		if len(levels) == 0 || len(levels) > 64 {
			c.fail("WithDelayLevels: need 1 to 64 levels, got %d", len(levels))
			return
		}
		for i, d := range levels {
			if d <= 0 {
				c.fail("WithDelayLevels: level %d is %v, must be positive", i+1, d)
				return
			}
		}
		c.delayLevels = append([]time.Duration(nil), levels...)
	}
}

// WithDelayScale multiplies every delay level by f (0 < f ≤ 1000): 0.001 makes level 3
// (10 s) take 10 ms. It applies to the levels in force when it runs, so put it after
// WithDelayLevels.
func WithDelayScale(f float64) Opt {
	return func(c *config) {
		if !(f > 0 && f <= 1000) {
			c.fail("WithDelayScale(%v): must be in (0, 1000]", f)
			return
		}
		levels := make([]time.Duration, len(c.delayLevels))
		for i, d := range c.delayLevels {
			levels[i] = max(time.Duration(float64(d)*f), time.Microsecond)
		}
		c.delayLevels = levels
	}
}

// WithClientExpiry sets how long a client may stay silent (no heartbeat) before the
// broker closes its connection and forgets it (default 120 s). Between 1 ms and 24 h.
func WithClientExpiry(d time.Duration) Opt {
	return func(c *config) {
		if d < time.Millisecond || d > 24*time.Hour {
			c.fail("WithClientExpiry(%v): must be 1ms to 24h", d)
			return
		}
		c.clientExpiry = d
	}
}

// WithLockExpiry sets how long a queue lock (LOCK_BATCH_MQ) lasts without renewal
// (default 60 s). Between 1 ms and 24 h.
func WithLockExpiry(d time.Duration) Opt {
	return func(c *config) {
		if d < time.Millisecond || d > 24*time.Hour {
			c.fail("WithLockExpiry(%v): must be 1ms to 24h", d)
			return
		}
		c.lockExpiry = d
	}
}

// WithHoldCheckInterval sets how often held long polls are re-checked for messages
// their filter did not match on arrival (PullRequestHoldService, default 5 s). A held
// pull is always answered at its own suspend timeout, whatever this interval.
func WithHoldCheckInterval(d time.Duration) Opt {
	return func(c *config) {
		if d < time.Millisecond || d > time.Hour {
			c.fail("WithHoldCheckInterval(%v): must be 1ms to 1h", d)
			return
		}
		c.holdCheck = d
	}
}

// WithRetryMaxTimes sets the consumer groups' retryMaxTimes (default 16): the maximum
// reconsume count for send-back requests from clients older than V3_4_9, which do not
// carry their own.
func WithRetryMaxTimes(n int) Opt {
	return func(c *config) {
		if n < 0 || n > 1<<20 {
			c.fail("WithRetryMaxTimes(%d): must be 0 to 1048576", n)
			return
		}
		c.retryMaxTimes = int32(n)
	}
}

// WithMaxMessageSize sets the largest stored record a send may create (default 4 MiB);
// larger ones get MESSAGE_ILLEGAL. Between 1 KiB and 15 MiB.
func WithMaxMessageSize(n int) Opt {
	return func(c *config) {
		if n < 1<<10 || n > 15<<20 {
			c.fail("WithMaxMessageSize(%d): must be 1 KiB to 15 MiB", n)
			return
		}
		c.maxMessageSize = n
	}
}

// WithPropertyFilter turns the brokers' enablePropertyFilter on or off (default off, as
// in 4.9.8). On, SQL92 subscriptions are filtered on the broker; off, their
// CHECK_CLIENT_CONFIG and pulls are answered SYSTEM_ERROR "The broker does not support
// consumer to filter message by SQL92", as a real broker answers them.
func WithPropertyFilter(on bool) Opt {
	return func(c *config) { c.propertyFilter = on }
}

// portOf returns the configured port of broker i (0 when none).
func (c *config) portOf(i int) int {
	if i < len(c.brokerPorts) {
		return c.brokerPorts[i]
	}
	return 0
}

func hostPort(host string, port int) string {
	a, err := netip.ParseAddr(host)
	if err == nil && a.Is6() {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

// WithRocketMQ5 makes the brokers answer, as a 5.3.3 broker does, what RocketMQ 5 adds
// for consumers: QUERY_ASSIGNMENT and SET_MESSAGE_REQUEST_MODE (server-side
// rebalancing, SetConsumeMode), POP_MESSAGE, ACK_MESSAGE, BATCH_ACK_MESSAGE and
// CHANGE_MESSAGE_INVISIBLETIME (POP consumption), and heartbeats with
// IS_SUPPORT_HEART_BEAT_V2 and IS_SUB_CHANGE. Without it (the default) they are 4.9.8
// brokers, which answer those codes REQUEST_CODE_NOT_SUPPORTED.
func WithRocketMQ5(on bool) Opt {
	return func(c *config) { c.rocketMQ5 = on }
}

// WithPopReviveDelay makes a POP checkpoint's unacked messages come back this long after
// its invisible time ends, instead of on time (0 to 1 min). A real 5.3.3 broker's revive
// service takes about 1 to 2 s (golden p_pop_533), during which an ack that arrives late
// still counts.
func WithPopReviveDelay(d time.Duration) Opt {
	return func(c *config) {
		if d < 0 || d > time.Minute {
			c.fail("WithPopReviveDelay(%v): must be 0 to 1m", d)
			return
		}
		c.popReviveDelay = d
	}
}
