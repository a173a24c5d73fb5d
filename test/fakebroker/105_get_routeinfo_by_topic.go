package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// GET_ROUTEINFO_BY_TOPIC (105), name server; 4.9.8's
// DefaultRequestProcessor.getRouteInfoByTopic.
//
// Supported: the route of every broker listed in routes that has the topic (queue data
// and the master's address), written fastjson-style ({0:"addr"}, unquoted broker ids)
// unless the request's version is V4_9_4 (401) or later or it sets
// acceptStandardJsonOnly, which get BrowserCompatible JSON; TOPIC_NOT_EXIST with the
// real remark; a response without ext fields, as 4.9.8 sends.
//
// Left out: orderTopicConf (the name server's orderMessageEnable is off by default),
// filter servers (always {}), and the system topics a real broker registers besides
// TBW102 (SCHEDULE_TOPIC_XXXX, the cluster and broker names, ...). Brokers are listed in
// configuration order, where a real name server's order is a HashMap's.
func (ns *NameServer) getRouteInfoByTopic(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetRouteInfoRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	rd, ok := ns.c.route(h.Topic)
	if !ok {
		return newResponse(req, protocol.ResponseTopicNotExist,
			"No topic route info in name server for the topic: "+h.Topic+faqSuffix)
	}
	style := protocol.StyleFastjson
	if req.Version >= protocol.VersionV4_9_4 || h.AcceptStandardJSONOnly {
		style = protocol.StyleBrowserCompatible
	}
	resp := newResponse(req, protocol.ResponseSuccess, "")
	resp.Body = rd.Encode(style)
	return resp
}
