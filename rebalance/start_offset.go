package rebalance

import (
	"context"
	"fmt"
	"strings"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
)

// startOffset returns where a newly assigned queue starts: the group's stored offset, or
// for a group with none, what StartFrom says (Java's computePullFromWhereWithException).
// An unknown stored offset (the broker could not be asked) is an error: the queue must
// not start, or it would start at a made-up place.
func (r *Rebalancer) startOffset(ctx context.Context, q message.Queue) (int64, error) {
	stored, err := r.cfg.Offsets.Read(ctx, q, offset.ReadFromStore)
	if err != nil {
		return 0, err
	}
	if stored >= 0 {
		return stored, nil
	}
	if stored != offset.NoOffset {
		return 0, fmt.Errorf("rebalance: stored offset %d of %s is neither an offset nor 'none'", stored, q)
	}
	retry := strings.HasPrefix(q.Topic, client.RetryTopicPrefix)
	switch r.cfg.StartFrom {
	case StartFromLast:
		if retry {
			return 0, nil
		}
		return r.cfg.Broker.MaxOffset(ctx, q)
	case StartFromFirst:
		return 0, nil
	case StartFromTimestamp:
		if retry {
			return r.cfg.Broker.MaxOffset(ctx, q)
		}
		return r.cfg.Broker.SearchOffset(ctx, q, r.cfg.StartTimestamp.UnixMilli())
	default:
		return 0, fmt.Errorf("rebalance: unknown start %d", r.cfg.StartFrom)
	}
}
