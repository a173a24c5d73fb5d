// Package consumer is rmqpush's public API: a RocketMQ push consumer with the delivery
// guarantees of Java's DefaultMQPushConsumer.
//
//	c, err := consumer.NewPushConsumer("orders-service",
//		consumer.WithNameServers("127.0.0.1:9876"),
//		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
//	err = c.Subscribe("orders", consumer.Tags("created", "paid"))
//	err = c.RegisterListener(consumer.ConcurrentlyFunc(func(ctx context.Context,
//		msgs []*message.Ext, cc *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
//		return consumer.ConsumeSuccess
//	}))
//	err = c.Start(ctx)
//	defer c.Shutdown(ctx)
//
// Delivery is at least once: a queue's committed offset never passes a message whose
// listener call did not succeed, unless the message was sent back to the broker for a
// later retry (through %RETRY%<group>, then %DLQ%<group> after MaxReconsumeTimes).
//
// Goroutines, all owned by the PushConsumer and ended by Shutdown: the pull service (1),
// the rebalancer (1), the consume workers (ConsumeGoroutineNums) and, for concurrent
// consumption, the sweeper that sends back messages past the consume timeout (1), a
// scheduler (offset
// persistence, consume timeouts, delayed re-consumption), and those of the client
// instance (a scheduler, and a read and a write loop per broker connection).
package consumer
