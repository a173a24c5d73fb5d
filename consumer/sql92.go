package consumer

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
)

// checkSQL92Subscriptions asks the master of every broker serving an SQL92-subscribed
// topic whether it can filter by the expression (CHECK_CLIENT_CONFIG), before the first
// heartbeat, as Java's start does (MQClientInstance.checkClientInBroker, which asks one
// broker per topic). A refusal fails Start with a *SubscriptionRefusedError per broker;
// a broker that cannot be reached is logged and left to its pulls, as the heartbeat
// leaves it.
func (c *PushConsumer) checkSQL92Subscriptions(ctx context.Context) error {
	var refused []error
	for _, topic := range c.topics() {
		sd, _ := c.subscription(topic)
		if sd.ExpressionType != protocol.ExpressionTypeSQL92 {
			continue
		}
		checks, err := c.inst.CheckClientConfig(ctx, c.names.Group, sd)
		if err != nil {
			return fmt.Errorf("consumer: Start: checking the SQL92 subscription of topic %s: %w", c.names.UserTopic(topic), err)
		}
		for _, ch := range checks {
			var be *protocol.BrokerError
			switch {
			case ch.Err == nil:
			case errors.As(ch.Err, &be):
				refused = append(refused, &SubscriptionRefusedError{Topic: c.names.UserTopic(topic), Expression: sd.SubString,
					BrokerName: ch.BrokerName, BrokerAddr: ch.Addr, Code: be.Code, Remark: be.Remark})
			default:
				c.logf(logging.LevelWarn, "could not ask a broker whether it filters by SQL92; its pulls will tell",
					message.Queue{Topic: topic, BrokerName: ch.BrokerName}, ch.Err)
			}
		}
	}
	switch len(refused) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("consumer: Start: %w", refused[0])
	}
	return fmt.Errorf("consumer: Start: %d brokers refused an SQL92 subscription:\n%w", len(refused), errors.Join(refused...))
}
