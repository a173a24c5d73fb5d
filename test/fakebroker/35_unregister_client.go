package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// UNREGISTER_CLIENT (35); 4.9.8's ClientManageProcessor.unregisterClient.
//
// Supported: the connection leaves the producer group and the consumer group named in
// the header (membership is by connection, whatever clientID says, as 4.9.8 keys its
// tables by channel); the consumer group's remaining members get
// NOTIFY_CONSUMER_IDS_CHANGED, even when the connection was not a member; an empty group
// is forgotten. The answer carries empty ext fields, as 4.9.8's.
//
// Left out: nothing a client can see.
func (b *Broker) unregisterClient(sc conn, req *remoting.Command) *remoting.Command {
	var h protocol.UnregisterClientRequest
	if err := h.Decode(req.ExtFields); err != nil {
		return badRequest(sc, req, err)
	}
	b.mu.Lock()
	if h.ProducerGroup != "" {
		if ps := b.producers[h.ProducerGroup]; ps != nil {
			delete(ps, sc)
			if len(ps) == 0 {
				delete(b.producers, h.ProducerGroup)
			}
		}
	}
	if h.ConsumerGroup != "" {
		b.unregisterConsumer(h.ConsumerGroup, sc)
	}
	b.mu.Unlock()
	resp := newResponse(req, protocol.ResponseSuccess, "")
	resp.ExtFields = remoting.Fields{}
	return resp
}
