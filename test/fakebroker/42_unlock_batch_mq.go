package fakebroker

import (
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// UNLOCK_BATCH_MQ (42); 4.9.8's AdminBrokerProcessor.unlockBatchMQ.
//
// Supported: the client's own locks on the queues of mqSet are released (others' are
// left); SUCCESS without ext fields; oneway requests too.
//
// Left out: onlyThisBroker (5.x) is ignored, as 4.9.8 ignores it.
func (b *Broker) unlockBatchMQ(sc conn, req *remoting.Command) *remoting.Command {
	var body protocol.UnlockBatchRequest
	if err := body.Decode(req.Body); err != nil {
		return badBody(sc, req, err)
	}
	b.mu.Lock()
	b.unlockBatch(body.ConsumerGroup, body.MQSet, body.ClientID)
	b.mu.Unlock()
	return newResponse(req, protocol.ResponseSuccess, "")
}
