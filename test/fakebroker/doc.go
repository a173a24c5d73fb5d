// Package fakebroker is an in-process Apache RocketMQ 4.9.8: a name server and any
// number of brokers (masters), each on its own loopback port, speaking the real remoting
// protocol (JSON and ROCKETMQ headers, store-format message records). It is what
// franz-go's kfake is for Kafka: the embedded default of rmqpush's examples, the backbone
// of its integration tests, and a package for users' own tests.
//
//	c, err := fakebroker.NewCluster(fakebroker.WithBrokers(2), fakebroker.WithTopic("orders", 8))
//	...
//	defer c.Close()
//	consumer.NewPushConsumer("group", consumer.WithNameServers(c.NameServerAddr()), ...)
//
// # Behaviour
//
// Each request code is handled in a file named after it (11_pull_message.go,
// 34_heart_beat.go, ...) that opens with what it supports of 4.9.8's behaviour and what
// it leaves out. Supported: GET_ROUTEINFO_BY_TOPIC and GET_BROKER_CLUSTER_INFO on the
// name server; SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE, PULL_MESSAGE (with long
// polling), QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP,
// GET_MAX_OFFSET, GET_MIN_OFFSET, VIEW_MESSAGE_BY_ID, HEART_BEAT, UNREGISTER_CLIENT,
// CONSUMER_SEND_MSG_BACK, GET_CONSUMER_LIST_BY_GROUP, LOCK_BATCH_MQ, UNLOCK_BATCH_MQ,
// CHECK_CLIENT_CONFIG, UPDATE_AND_CREATE_TOPIC and INVOKE_BROKER_TO_RESET_OFFSET on
// brokers; and, started by
// the broker, NOTIFY_CONSUMER_IDS_CHANGED, RESET_CONSUMER_CLIENT_OFFSET,
// GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY and GET_CONSUMER_STATUS_FROM_CLIENT
// (the last three as Broker methods a test calls). With WithRocketMQ5 the brokers also
// answer what 5.3.3 adds for consumers: QUERY_ASSIGNMENT and SET_MESSAGE_REQUEST_MODE
// (server-side rebalancing; Cluster.SetConsumeMode is mqadmin setConsumeMode), and
// POP_MESSAGE, ACK_MESSAGE, BATCH_ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME (POP
// consumption, with checkpoints, invisible times and the revive into the POP retry
// topic: pop.go), checked against golden p_pop_533. Any other code is answered
// REQUEST_CODE_NOT_SUPPORTED. Requests whose header or body cannot be read get
// SYSTEM_ERROR, in JSON, as 4.9.8's catch-all answers; nothing a client sends can panic
// a server or make it allocate without bound (tables have limits; see the files).
//
// Subscriptions are filtered as 4.9.8 filters them: by tag hash code, or, with
// WithPropertyFilter (enablePropertyFilter, off by default as in 4.9.8), by SQL92
// expressions over message properties (filter.go, filterdata.go, and the evaluator in
// internal/sql92, which parses, refuses and evaluates expressions as 4.9.8 does).
//
// # Testing with it
//
// Inspection (Produce, Messages, CommittedOffset, RetryMessages, DLQMessages, Scheduled,
// Locks, Clients, LastHeartbeat, Requests...), fault injection (Inject a Fault to drop,
// delay or fail requests of a code; CloseConnections, RefuseConnections, Pause), and the
// life cycle of a broker (Stop and Start keep its data, Kill resets its connections and
// leaves it in routes) are methods of Cluster, Broker and NameServer. Delay levels can be
// scaled down (WithDelayScale) so retries take milliseconds; client expiry and lock
// expiry are options too.
//
// # Goroutines and locks
//
// A Cluster owns one scheduler goroutine (every timer: long-poll timeouts, delayed
// messages, the client-expiry scan, delayed requests) and, per server, the transport's
// accept loop and a read and a write loop per connection. Close ends them all. Each
// broker's state is guarded by one mutex; handlers run on the connection read loops and
// never block. Broker calls that wait for a client's answer run on the caller's
// goroutine.
package fakebroker
