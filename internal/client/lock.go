package client

import (
	"context"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// lockTimeout bounds lock and unlock calls, as Java's 1 s.
const lockTimeout = time.Second

// LockBatch asks the master of brokerName to lock qs for the group and this client, and
// returns the queues it locked (orderly consumption).
func (i *Instance) LockBatch(ctx context.Context, group, brokerName string, qs []message.Queue) ([]message.Queue, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	addr, err := i.masterAddr(ctx, qs[0].Topic, brokerName)
	if err != nil {
		return nil, err
	}
	body := protocol.LockBatchRequest{ConsumerGroup: group, ClientID: i.cfg.ClientID, MQSet: qs}
	resp, err := i.invokeWithin(ctx, lockTimeout, addr, remoting.NewRequest(protocol.RequestLockBatchMQ, nil, body.Encode(protocol.StyleStandard)))
	if err != nil {
		return nil, err
	}
	var out protocol.LockBatchResponse
	if err := out.Decode(resp.Body); err != nil {
		return nil, answerError(addr, resp, err)
	}
	return out.LockOKMQSet, nil
}

// UnlockBatch asks the master of brokerName to unlock qs for the group and this client,
// and waits for its answer.
func (i *Instance) UnlockBatch(ctx context.Context, group, brokerName string, qs []message.Queue) error {
	if len(qs) == 0 {
		return nil
	}
	addr, err := i.masterAddr(ctx, qs[0].Topic, brokerName)
	if err != nil {
		return err
	}
	body := protocol.UnlockBatchRequest{ConsumerGroup: group, ClientID: i.cfg.ClientID, MQSet: qs}
	_, err = i.invokeWithin(ctx, lockTimeout, addr, remoting.NewRequest(protocol.RequestUnlockBatchMQ, nil, body.Encode(protocol.StyleStandard)))
	return err
}
