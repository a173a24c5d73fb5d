package fakebroker_test

import (
	"fmt"

	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// A cluster with two brokers and a topic of 4 queues on each; messages stored without a
// client, then read back through the inspection API.
func ExampleNewCluster() {
	c, err := fakebroker.NewCluster(fakebroker.WithBrokers(2), fakebroker.WithTopic("orders", 4))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	// Clients connect to c.NameServerAddr().
	produced, err := c.Produce("orders",
		&message.Message{Body: []byte("first")}, &message.Message{Body: []byte("second")})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range produced {
		fmt.Println(p.Queue.BrokerName, p.Queue.QueueID, p.QueueOffset)
	}
	fmt.Println(len(c.Messages("orders")), "messages")
	// Output:
	// broker-a 0 0
	// broker-a 1 0
	// 2 messages
}

// Making a broker fail the next three pulls with SYSTEM_BUSY.
func ExampleBroker_Inject() {
	c, err := fakebroker.NewCluster()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	const pullMessage, systemBusy = 11, 2
	inj, err := c.Broker("broker-a").Inject(fakebroker.Fault{Code: pullMessage, Fail: systemBusy, Times: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(inj.Hits())
	// Output: 0
}
