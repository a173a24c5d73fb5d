package fakebroker

import (
	"errors"
	"fmt"
	"sync"

	"github.com/rmqpush/rmqpush/message"
)

// Cluster is a fake RocketMQ 4.9.8 deployment: one name server and one or more brokers
// (masters), each serving real remoting frames on its own loopback port.
//
// Goroutines: the transport's (an accept loop, and a read and a write loop per
// connection, per server) and one scheduler goroutine that runs every timer of the
// cluster (long-poll timeouts, delayed messages, client expiry, delayed requests).
// Close ends them all.
type Cluster struct {
	cfg     config
	sched   *scheduler
	ns      *NameServer
	brokers []*Broker
	byName  map[string]*Broker
	bodies  sync.Pool // *[]byte: pull bodies, reused once encoded into a frame

	mu     sync.Mutex
	closed bool
	rr     uint64 // round robin of Produce
}

// NewCluster starts a name server and the brokers, with the topics the options create.
// It returns once every server listens. Close it when done.
func NewCluster(opts ...Opt) (*Cluster, error) {
	c := &Cluster{cfg: defaultConfig(), byName: make(map[string]*Broker)}
	c.bodies.New = func() any { return new([]byte) }
	for _, o := range opts {
		o(&c.cfg)
	}
	if err := c.cfg.validate(); err != nil {
		return nil, err
	}
	c.sched = newScheduler()
	c.ns = newNameServer(c, hostPort(c.cfg.host, c.cfg.nsPort))
	for i, name := range c.cfg.names() {
		b := newBroker(c, i, name, hostPort(c.cfg.host, c.cfg.portOf(i)))
		c.brokers = append(c.brokers, b)
		c.byName[name] = b
	}
	for _, t := range c.cfg.topics {
		if err := c.CreateTopic(t.name, t.queues, t.brokers...); err != nil {
			c.sched.stop()
			return nil, err
		}
	}
	if err := c.ns.Start(); err != nil {
		c.sched.stop()
		return nil, err
	}
	for _, b := range c.brokers {
		if err := b.Start(); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, nil
}

// Close stops every server, drops every connection and ends every goroutine of the
// cluster. Calling it again does nothing.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	for _, b := range c.brokers {
		b.Stop()
	}
	c.ns.Stop()
	c.sched.stop()
	return nil
}

func (c *Cluster) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// NameServer returns the name server.
func (c *Cluster) NameServer() *NameServer { return c.ns }

// NameServerAddr returns the name server's address, "host:port": what clients are
// configured with.
func (c *Cluster) NameServerAddr() string { return c.ns.Addr() }

// Brokers returns the brokers, in the order they were configured.
func (c *Cluster) Brokers() []*Broker { return append([]*Broker(nil), c.brokers...) }

// Broker returns the broker with the given name, or nil.
func (c *Cluster) Broker(name string) *Broker { return c.byName[name] }

// CreateTopic creates (or updates the queue count of) a topic with read-write
// permission on the named brokers, or on every broker when none are named, as
// `mqadmin updateTopic` does. queues is 1 to 1024.
func (c *Cluster) CreateTopic(topic string, queues int, brokers ...string) error {
	if err := checkTopicSpec(topic, queues); err != nil {
		return fmt.Errorf("fakebroker: CreateTopic(%q, %d): %w", topic, queues, err)
	}
	targets := c.brokers
	if len(brokers) > 0 {
		targets = nil
		for _, name := range brokers {
			b := c.byName[name]
			if b == nil {
				return fmt.Errorf("fakebroker: CreateTopic(%q): unknown broker %q", topic, name)
			}
			targets = append(targets, b)
		}
	}
	for _, b := range targets {
		b.CreateTopic(topic, queues, permRW)
	}
	return nil
}

// Produce stores messages in topic as a producer would, without a client: each message
// goes to the next writable queue of the topic across the brokers that route it (round
// robin), gets a UNIQ_KEY unless it has one, and wakes long polls waiting for it. The
// messages' own Topic is ignored. A topic no broker has is created on every running
// broker with 4 queues when auto-creation is on, else Produce fails.
func (c *Cluster) Produce(topic string, msgs ...*message.Message) ([]Produced, error) {
	queues := c.writableQueues(topic)
	if len(queues) == 0 {
		if !c.cfg.autoCreate {
			return nil, fmt.Errorf("fakebroker: Produce: topic %q does not exist and auto-creation is off", topic)
		}
		if err := checkTopicSpec(topic, DefaultProduceQueueNums); err != nil {
			return nil, fmt.Errorf("fakebroker: Produce(%q): %w", topic, err)
		}
		for _, b := range c.brokers {
			if b.Running() {
				b.CreateTopic(topic, DefaultProduceQueueNums, permRW)
			}
		}
		if queues = c.writableQueues(topic); len(queues) == 0 {
			return nil, errors.New("fakebroker: Produce: no broker is running")
		}
	}
	out := make([]Produced, 0, len(msgs))
	for _, m := range msgs {
		c.mu.Lock()
		q := queues[c.rr%uint64(len(queues))]
		c.rr++
		c.mu.Unlock()
		p, err := c.byName[q.BrokerName].Produce(topic, int(q.QueueID), m)
		if err != nil {
			return out, err
		}
		out = append(out, p...)
	}
	return out, nil
}

// writableQueues lists the writable queues of topic on the registered brokers.
func (c *Cluster) writableQueues(topic string) []message.Queue {
	var out []message.Queue
	for _, b := range c.brokers {
		qd, ok := b.queueData(topic)
		if !ok || qd.Perm&permWrite == 0 {
			continue
		}
		for i := int32(0); i < qd.WriteQueueNums; i++ {
			out = append(out, message.Queue{Topic: topic, BrokerName: b.name, QueueID: i})
		}
	}
	return out
}

// Messages returns every message of topic on every broker, broker by broker and queue
// by queue, in queue-offset order.
func (c *Cluster) Messages(topic string) []*message.Ext {
	var out []*message.Ext
	for _, b := range c.brokers {
		out = append(out, b.TopicMessages(topic)...)
	}
	return out
}

// RetryMessages returns the messages of %RETRY%<group> on every broker (those whose
// delay has passed; see Broker.Scheduled for the others).
func (c *Cluster) RetryMessages(group string) []*message.Ext { return c.Messages(RetryTopic(group)) }

// DLQMessages returns the messages of %DLQ%<group> on every broker.
func (c *Cluster) DLQMessages(group string) []*message.Ext { return c.Messages(DLQTopic(group)) }

// ResetOffsetByTime does what `mqadmin resetOffsetByTime` makes every broker of the
// topic do (see Broker.ResetOffsetByTime) and returns the offsets of all of them.
func (c *Cluster) ResetOffsetByTime(group, topic string, timestamp int64, force bool) (map[message.Queue]int64, error) {
	out := make(map[message.Queue]int64)
	found := false
	for _, b := range c.brokers {
		if _, ok := b.queueData(topic); !ok {
			continue
		}
		found = true
		offs, err := b.ResetOffsetByTime(group, topic, timestamp, force)
		if err != nil {
			return nil, err
		}
		for q, o := range offs {
			out[q] = o
		}
	}
	if !found {
		return nil, fmt.Errorf("fakebroker: ResetOffsetByTime: no broker routes topic %q", topic)
	}
	return out, nil
}

// RetryTopic returns the retry topic of a consumer group, %RETRY%<group>.
func RetryTopic(group string) string { return retryPrefix + group }

// DLQTopic returns the dead-letter topic of a consumer group, %DLQ%<group>.
func DLQTopic(group string) string { return dlqPrefix + group }
