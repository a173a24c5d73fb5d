package fakebroker

import (
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// LOCK_BATCH_MQ (41); 4.9.8's AdminBrokerProcessor.lockBatchMQ.
//
// Supported: the queues of mqSet are locked for clientId in consumerGroup (locks.go); the
// answer's body lists those the client now holds ({"lockOKMQSet":[...]}), with no ext
// fields. A body that is not a LockBatchRequestBody gets SYSTEM_ERROR.
//
// Left out: onlyThisBroker (5.x lock fan-out to other brokers) is ignored, as 4.9.8
// ignores it; the locked set comes in request order, where 4.9.8's is a HashSet's.
func (b *Broker) lockBatchMQ(sc conn, req *remoting.Command) *remoting.Command {
	var body protocol.LockBatchRequest
	if err := body.Decode(req.Body); err != nil {
		return badBody(sc, req, err)
	}
	b.mu.Lock()
	locked := b.tryLockBatch(body.ConsumerGroup, body.MQSet, body.ClientID, time.Now())
	b.mu.Unlock()
	resp := newResponse(req, protocol.ResponseSuccess, "")
	out := protocol.LockBatchResponse{LockOKMQSet: locked}
	resp.Body = out.Encode(protocol.StyleFastjson)
	return resp
}
