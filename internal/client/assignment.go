package client

import (
	"context"
	"errors"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// ErrNoAssignment is returned by QueryAssignment when the broker had no answer for the
// topic (an unknown topic or strategy, no member list yet): the consumer keeps the
// queues it has, as Java's client does.
var ErrNoAssignment = errors.New("client: the broker has no assignment for the topic")

// QueryAssignment asks a master serving topic which of its queues this client consumes
// in group, and how (QUERY_ASSIGNMENT, server-side rebalancing): the broker allocates
// the topic's queues of every broker among the group's members with the named strategy
// and says for each whether to pull it or pop it. Java asks one broker chosen at random;
// this asks the masters in turn, starting with a different one each call, until one
// answers, so a broker that is down costs one failed call, not a round.
func (i *Instance) QueryAssignment(ctx context.Context, topic, group, strategy string, model protocol.MessageModel) ([]protocol.QueueAssignment, error) {
	masters, err := i.topicMasters(ctx, topic)
	if err != nil {
		return nil, err
	}
	body := (&protocol.QueryAssignmentRequest{Topic: topic, ConsumerGroup: group, ClientID: i.cfg.ClientID,
		StrategyName: strategy, MessageModel: model}).Encode(protocol.StyleStandard)
	start := int(i.assignSeq.Add(1))
	var errs []error
	for k := range masters {
		addr := masters[(start+k)%len(masters)].Addr
		resp, err := i.invoke(ctx, addr, remoting.NewRequest(protocol.RequestQueryAssignment, nil, body))
		if err != nil {
			var be *protocol.BrokerError
			if errors.As(err, &be) && be.Code == protocol.ResponseRequestCodeNotSupported {
				return nil, err // a broker without server-side rebalancing (4.x): the others are alike
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		var b protocol.QueryAssignmentResponse
		if err := b.Decode(resp.Body); err != nil {
			errs = append(errs, answerError(addr, resp, err))
			continue
		}
		if b.Null {
			return nil, ErrNoAssignment
		}
		return b.Assignments, nil
	}
	return nil, joinErrs(errs)
}
