// Package remoting speaks RocketMQ's TCP "remoting" protocol: frames with a size limit,
// the JSON and ROCKETMQ header serializations, connections with serialized writes and one
// read loop each, requests matched to responses by opaque, asynchronous and oneway calls,
// handlers for requests the peer starts, RPC hooks (ACL signing) and TLS.
//
// Client dials lazily, one connection per address; Server accepts connections for the
// fake broker. Neither logs: errors are returned or passed to hooks. Every goroutine the
// package starts (a read loop and a write loop per connection, a goroutine per dial in
// progress, a goroutine per inbound request a Client handles, the timers of asynchronous
// calls while they run) is owned by the Client or Server that started it and ends before
// its Close returns. The one exception is a Client's idle work (WithIdleWork): the work
// runs on a read loop between frames, and when it runs long another goroutine takes the
// loop over; the goroutine still running the work then belongs to the work's owner.
//
// # Frames
//
// EncodeFrame writes a whole frame into one buffer, so a connection sends each frame
// with a single write (and several queued frames with one writev). DecodeFrame decodes a
// whole frame from memory; FrameReader reads a stream and checks every length before it
// allocates. Headers are decoded in whichever serialization they arrive in, on every
// connection: a 4.9 broker answers held long polls in JSON even to ROCKETMQ requests.
//
// # Requests and responses
//
// Each side numbers its own requests (a counter per Client, and per Server), and a
// response is matched by opaque only among the requests its receiver sent: a peer's own
// requests may use the same opaques. A lost connection fails all of its pending calls at
// once with a *ConnError, wrapped in a *CallError that names the address, code and
// opaque.
//
// # Locks
//
// A Client's or Server's mutex guards its connection table and closed flag; each
// connection's mutex guards its pending calls and write queue. The owner's mutex may be
// held while taking a connection's, never the reverse, and no user code (callbacks,
// hooks, handlers) runs under either.
package remoting
