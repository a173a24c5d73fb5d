package client

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// QueryConsumerOffset asks q's master for the group's offset. found is false, with a nil
// error, when the broker answers QUERY_NOT_FOUND; any other failure is an error. It
// satisfies offset.BrokerAPI.
func (i *Instance) QueryConsumerOffset(ctx context.Context, group string, q message.Queue) (int64, bool, error) {
	addr, err := i.masterAddr(ctx, q.Topic, q.BrokerName)
	if err != nil {
		return 0, false, err
	}
	h := protocol.QueryConsumerOffsetRequest{ConsumerGroup: group, Topic: q.Topic, QueueID: q.QueueID, BrokerName: q.BrokerName}
	resp, err := i.invoke(ctx, addr, remoting.NewRequest(protocol.RequestQueryConsumerOffset, h.Encode(), nil))
	if err != nil {
		if errors.Is(err, protocol.ResponseCodeError(protocol.ResponseQueryNotFound)) {
			return 0, false, nil
		}
		return 0, false, err
	}
	var out protocol.QueryConsumerOffsetResponse
	if err := out.Decode(resp.ExtFields); err != nil {
		return 0, false, answerError(addr, resp, err)
	}
	return out.Offset, true, nil
}

// UpdateConsumerOffset writes the group's offset of q to q's master and waits for its
// answer, so a nil error means the master has it. It satisfies offset.BrokerAPI. Java
// writes to any node when the master is unknown; a slave's copy is overwritten by the
// master's, and since only changed offsets are written again, that write would be lost:
// without a master this fails, and the next round tries again.
func (i *Instance) UpdateConsumerOffset(ctx context.Context, group string, q message.Queue, offset int64) error {
	addr, err := i.masterAddr(ctx, q.Topic, q.BrokerName)
	if err != nil {
		return err
	}
	h := protocol.UpdateConsumerOffsetRequest{ConsumerGroup: group, Topic: q.Topic, QueueID: q.QueueID, CommitOffset: offset, BrokerName: q.BrokerName}
	_, err = i.invoke(ctx, addr, remoting.NewRequest(protocol.RequestUpdateConsumerOffset, h.Encode(), nil))
	return err
}

// SearchOffset returns the offset of the first message of q stored at or after
// timestampMillis.
func (i *Instance) SearchOffset(ctx context.Context, q message.Queue, timestampMillis int64) (int64, error) {
	addr, err := i.masterAddr(ctx, q.Topic, q.BrokerName)
	if err != nil {
		return 0, err
	}
	h := protocol.SearchOffsetRequest{Topic: q.Topic, QueueID: q.QueueID, Timestamp: timestampMillis, BrokerName: q.BrokerName}
	resp, err := i.invoke(ctx, addr, remoting.NewRequest(protocol.RequestSearchOffsetByTimestamp, h.Encode(), nil))
	if err != nil {
		return 0, err
	}
	var out protocol.SearchOffsetResponse
	if err := out.Decode(resp.ExtFields); err != nil {
		return 0, answerError(addr, resp, err)
	}
	return out.Offset, nil
}

// MaxOffset returns q's max offset: the offset the next stored message will get.
func (i *Instance) MaxOffset(ctx context.Context, q message.Queue) (int64, error) {
	addr, err := i.masterAddr(ctx, q.Topic, q.BrokerName)
	if err != nil {
		return 0, err
	}
	h := protocol.GetMaxOffsetRequest{Topic: q.Topic, QueueID: q.QueueID, BrokerName: q.BrokerName}
	resp, err := i.invoke(ctx, addr, remoting.NewRequest(protocol.RequestGetMaxOffset, h.Encode(), nil))
	if err != nil {
		return 0, err
	}
	var out protocol.GetMaxOffsetResponse
	if err := out.Decode(resp.ExtFields); err != nil {
		return 0, answerError(addr, resp, err)
	}
	return out.Offset, nil
}

// MinOffset returns q's min offset: the offset of its oldest stored message.
func (i *Instance) MinOffset(ctx context.Context, q message.Queue) (int64, error) {
	addr, err := i.masterAddr(ctx, q.Topic, q.BrokerName)
	if err != nil {
		return 0, err
	}
	h := protocol.GetMinOffsetRequest{Topic: q.Topic, QueueID: q.QueueID, BrokerName: q.BrokerName}
	resp, err := i.invoke(ctx, addr, remoting.NewRequest(protocol.RequestGetMinOffset, h.Encode(), nil))
	if err != nil {
		return 0, err
	}
	var out protocol.GetMinOffsetResponse
	if err := out.Decode(resp.ExtFields); err != nil {
		return 0, answerError(addr, resp, err)
	}
	return out.Offset, nil
}

// ConsumerIDs returns the ids of the group's members: the union of what every master
// serving topic knows. Java asks one broker at random; a broker that restarted lists
// only the members that heartbeated it since, and a member that believed such a list
// would take every queue while the others kept theirs. It fails only when no broker
// answered.
func (i *Instance) ConsumerIDs(ctx context.Context, topic, group string) ([]string, error) {
	addrs, err := i.mastersOfTopic(ctx, topic)
	if err != nil {
		return nil, err
	}
	type answer struct {
		ids []string
		err error
	}
	answers := make([]answer, len(addrs))
	var wg sync.WaitGroup
	for k, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[k].ids, answers[k].err = i.consumerIDsFrom(ctx, addr, group)
		}()
	}
	wg.Wait()
	var (
		union []string
		errs  []error
	)
	for _, a := range answers {
		if a.err != nil {
			errs = append(errs, a.err)
			continue
		}
		union = append(union, a.ids...)
	}
	if len(errs) == len(addrs) {
		return nil, joinErrs(errs)
	}
	slices.Sort(union)
	return slices.Compact(union), nil
}

func (i *Instance) consumerIDsFrom(ctx context.Context, addr, group string) ([]string, error) {
	h := protocol.GetConsumerListByGroupRequest{ConsumerGroup: group}
	resp, err := i.invoke(ctx, addr, remoting.NewRequest(protocol.RequestGetConsumerListByGroup, h.Encode(), nil))
	if err != nil {
		return nil, err
	}
	var out protocol.ConsumerIDList
	if err := out.Decode(resp.Body); err != nil {
		return nil, answerError(addr, resp, err)
	}
	return out.ConsumerIDList, nil
}
