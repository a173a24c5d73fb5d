package remoting

import (
	"context"
	"strconv"
)

// Handler answers a request the peer of a Client connection started (the broker's
// NOTIFY_CONSUMER_IDS_CHANGED, GET_CONSUMER_RUNNING_INFO, ...). Each call runs in its own
// goroutine, owned by the Client; ctx is cancelled when the connection or the Client
// closes. addr is the address the connection was dialed to. A non-nil response is sent
// back with the request's opaque, the response flag and the request's serialization,
// unless the request was oneway: a oneway request is never answered. Return nil to send
// nothing.
type Handler func(ctx context.Context, addr string, req *Command) *Command

// RPCHook sees every request a Client sends and every response it gets back. Hooks run
// in the order they were given. BeforeRequest runs in the caller's goroutine after the
// opaque, flag and serialization are set and before the request is encoded, so it may
// add ext fields (ACL signing does). AfterResponse runs on the connection's read loop just
// before the response is handed to the caller; it is not called for oneway requests or for
// calls that failed. Both must be quick and must not block.
type RPCHook interface {
	// BeforeRequest runs before req is encoded and sent to addr.
	BeforeRequest(addr string, req *Command)
	// AfterResponse runs when resp, the answer to req from addr, arrived.
	AfterResponse(addr string, req, resp *Command)
}

// ConnHooks are told about a Client's connections. Either function may be nil. They run on
// the goroutine that saw the event (a read loop, a write loop, the idle sweep's timer, or
// the caller of CloseConn or Close), so they must be quick and must not block or call
// Close.
type ConnHooks struct {
	// OnConnClosed is called once per connection after it closed and its pending calls
	// failed; err is why it closed (ErrClosed when the Client or CloseConn closed it).
	OnConnClosed func(addr string, err error)
	// OnBadFrame is called when a frame breaks the protocol (err is a *FrameError);
	// the connection is closed right after.
	OnBadFrame func(addr string, err error)
}

// ServerHandler answers a request on a Server connection. It runs on the connection's
// read loop, so requests of one connection are handled one at a time, in order; it must
// not block (a long poll is held by returning nil and answering later with
// sc.Respond from another goroutine or a timer), and it must not wait for the answer to
// an sc.Invoke, which is read by the same loop. A non-nil response is sent with the
// request's opaque, the response flag and the request's serialization, unless the request
// was oneway.
type ServerHandler func(sc *ServerConn, req *Command) *Command

// ServerHooks are told about a Server's connections. Any function may be nil. They must be
// quick and must not block or call Server.Close.
type ServerHooks struct {
	// OnConnOpened is called for each accepted connection before its first request is
	// read, on the goroutine running Serve.
	OnConnOpened func(sc *ServerConn)
	// OnConnClosed is called once per connection after it closed and its pending calls
	// failed, with why it closed.
	OnConnClosed func(sc *ServerConn, err error)
	// OnBadFrame is called when a frame breaks the protocol (err is a *FrameError);
	// the connection is closed right after.
	OnBadFrame func(sc *ServerConn, err error)
	// OnServeError is called when the accept loop started by Listen stops with an error
	// other than ErrClosed.
	OnServeError func(err error)
}

// Response codes the transport itself answers with.
const (
	codeSystemError             int32 = 1
	codeSystemBusy              int32 = 2
	codeRequestCodeNotSupported int32 = 3
)

// notSupported is the answer to a request no handler takes: REQUEST_CODE_NOT_SUPPORTED
// with Java's remark, leading space included (NettyRemotingAbstract).
func notSupported(req *Command) *Command {
	return NewResponse(req, codeRequestCodeNotSupported, " request type "+strconv.Itoa(int(req.Code))+" not supported")
}
