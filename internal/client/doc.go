// Package client is the client instance a consumer talks to RocketMQ through: it knows
// the name servers, keeps the routes of the topics its consumers use and the addresses of
// their brokers, sends heartbeats, makes the broker calls a push consumer needs (pull,
// offsets, consumer lists, send-back and the retry fallback send, queue locks,
// unregister), and hands requests the brokers start (NOTIFY_CONSUMER_IDS_CHANGED,
// RESET_CONSUMER_CLIENT_OFFSET, GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY,
// GET_CONSUMER_STATUS_FROM_CLIENT) to the consumer registered for their group.
//
// An Instance is shared explicitly: a consumer creates and owns one unless it is given
// one. There is no global registry.
//
// Goroutines: Start launches one scheduler goroutine (route refresh and heartbeat, every
// 30 s by default), owned by the Instance and ended by Shutdown. The remoting.Client it
// owns runs a read and a write loop per connection and a goroutine per broker-initiated
// request; Shutdown closes it and waits for them.
package client
