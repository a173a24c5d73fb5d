package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// GET_BROKER_CLUSTER_INFO (106), name server; 4.9.8's
// DefaultRequestProcessor.getBrokerClusterInfo, which admin tools call
// (`mqadmin updateTopic -c`, clusterList).
//
// Supported: the ClusterInfo body (brokerAddrTable and clusterAddrTable) of the brokers
// listed in routes, fastjson-style as 4.9.8 always writes it.
//
// Left out: nothing a client can see, beyond map order (configuration order here).
func (ns *NameServer) getBrokerClusterInfo(_ conn, req *remoting.Command) *remoting.Command {
	w := protocol.NewWriter(protocol.StyleFastjson)
	w.BeginObject()
	w.Key("brokerAddrTable")
	w.BeginObject()
	var names []string
	for _, b := range ns.c.brokers {
		if !b.isRegistered() {
			continue
		}
		names = append(names, b.name)
		w.Key(b.name)
		w.BeginObject()
		w.Key("brokerAddrs")
		w.BeginObject()
		w.IntKey(protocol.MasterID)
		w.Str(b.Addr())
		w.EndObject()
		w.Key("brokerName")
		w.Str(b.name)
		w.Key("cluster")
		w.Str(ns.c.cfg.clusterName)
		w.EndObject()
	}
	w.EndObject()
	w.Key("clusterAddrTable")
	w.BeginObject()
	if len(names) > 0 {
		w.Key(ns.c.cfg.clusterName)
		w.BeginArray()
		for _, n := range names {
			w.Str(n)
		}
		w.EndArray()
	}
	w.EndObject()
	w.EndObject()
	resp := newResponse(req, protocol.ResponseSuccess, "")
	resp.Body = w.Bytes()
	return resp
}
