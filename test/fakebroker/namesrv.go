package fakebroker

import (
	"errors"

	"github.com/rmqpush/rmqpush/internal/protocol"
)

// NameServer is the cluster's fake name server. It holds no state of its own: routes are
// read from the brokers when asked for, so a topic a broker creates is routable at once
// (a real broker registers a new topic with the name server right away too). Its
// methods are safe for concurrent use.
type NameServer struct {
	c  *Cluster
	ep *endpoint
}

func newNameServer(c *Cluster, addr string) *NameServer {
	ns := &NameServer{c: c, ep: newEndpoint("name server", addr, c.sched)}
	ns.ep.handle(protocol.RequestGetRouteInfoByTopic, ns.getRouteInfoByTopic)
	ns.ep.handle(protocol.RequestGetBrokerClusterInfo, ns.getBrokerClusterInfo)
	return ns
}

// Addr returns the name server's address, "host:port".
func (ns *NameServer) Addr() string { return ns.ep.address() }

// Running reports whether the name server is serving.
func (ns *NameServer) Running() bool { return ns.ep.isRunning() }

// Start starts a stopped name server again on the same address.
func (ns *NameServer) Start() error {
	if ns.c.isClosed() {
		return errors.New("fakebroker: name server: the cluster is closed")
	}
	return ns.ep.start(nil)
}

// Stop stops the name server; its connections close.
func (ns *NameServer) Stop() { ns.ep.stop(false) }

// Kill stops the name server abruptly: its connections are reset.
func (ns *NameServer) Kill() { ns.ep.stop(true) }

// route builds the route of topic from the brokers listed in routes.
func (c *Cluster) route(topic string) (*protocol.TopicRouteData, bool) {
	rd := &protocol.TopicRouteData{FilterServerTable: map[string][]string{}}
	for _, b := range c.brokers {
		qd, ok := b.queueData(topic)
		if !ok {
			continue
		}
		rd.QueueDatas = append(rd.QueueDatas, qd)
		rd.BrokerDatas = append(rd.BrokerDatas, protocol.BrokerData{
			Cluster:     c.cfg.clusterName,
			BrokerName:  b.name,
			BrokerAddrs: map[int64]string{protocol.MasterID: b.Addr()},
		})
	}
	return rd, len(rd.QueueDatas) > 0
}

// queueData returns the topic's queue data on b when b is listed in routes and has it.
func (b *Broker) queueData(topic string) (protocol.QueueData, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[topic]
	if !b.registered || t == nil {
		return protocol.QueueData{}, false
	}
	return protocol.QueueData{BrokerName: b.name, ReadQueueNums: t.read, WriteQueueNums: t.write,
		Perm: t.perm, TopicSysFlag: t.sysFlag}, true
}
