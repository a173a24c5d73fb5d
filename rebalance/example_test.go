package rebalance_test

import (
	"errors"
	"fmt"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/rebalance"
)

func ExampleAveragely() {
	var mqAll []message.Queue // sorted by message.Queue.Compare
	for id := range 8 {
		mqAll = append(mqAll, message.Queue{Topic: "orders", BrokerName: "broker-a", QueueID: int32(id)})
	}
	cidAll := []string{"10.0.0.1@1", "10.0.0.2@1", "10.0.0.3@1"} // sorted

	var s rebalance.AllocateStrategy = rebalance.Averagely{}
	for _, cid := range cidAll {
		mine, err := s.Allocate("orders-service", cid, mqAll, cidAll)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(s.Name(), cid, mine)
	}

	// A client the broker does not list yet gets nothing, and an error to log.
	mine, err := s.Allocate("orders-service", "10.0.0.9@1", mqAll, cidAll)
	fmt.Println(len(mine), errors.Is(err, rebalance.ErrConsumerNotInList))
	// Output:
	// AVG 10.0.0.1@1 [orders@broker-a:0 orders@broker-a:1 orders@broker-a:2]
	// AVG 10.0.0.2@1 [orders@broker-a:3 orders@broker-a:4 orders@broker-a:5]
	// AVG 10.0.0.3@1 [orders@broker-a:6 orders@broker-a:7]
	// 0 true
}
