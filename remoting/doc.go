// Package remoting speaks RocketMQ's TCP "remoting" protocol: frames with a size limit,
// the JSON and ROCKETMQ header serializations, connections with serialized writes and one
// read loop each, requests matched to responses by opaque, asynchronous and oneway calls,
// handlers for requests the peer starts, RPC hooks (ACL signing) and TLS.
//
// Client dials lazily, one connection per address; Server accepts connections for the
// fake broker. Neither logs: errors are returned or passed to hooks. Every goroutine the
// package starts (a read loop per connection, a goroutine per inbound request handler) is
// owned by the Client or Server that started it and ends before its Close returns.
package remoting
