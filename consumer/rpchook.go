package consumer

import "github.com/rmqpush/rmqpush/remoting"

// RPCHook sees every request the consumer sends to a name server or a broker, and the
// answer to each, as Java's RPCHook does: BeforeRequest runs before the request is
// encoded and may add ext fields (req.ExtFields.Set), for example a cloud's own request
// signature; AfterResponse runs when the answer arrived, whatever its code (it is not
// called for oneway requests or for calls that got no answer).
//
// BeforeRequest runs on the goroutine making the call, which for pulls is the consumer's
// one pull goroutine, and AfterResponse on the connection's read loop: both must be
// quick, must not block, and must not keep req or resp after they return. A hook that
// panics is a bug in the hook and is not recovered. Unlike Java's, hooks do not see the
// requests brokers send to the consumer (NOTIFY_CONSUMER_IDS_CHANGED, admin calls).
type RPCHook = remoting.RPCHook

// WithRPCHook adds a hook around every request the consumer sends; hooks run in the
// order given. The ACL signing of WithCredentials is itself such a hook and always runs
// after these, so the signature covers the fields they add.
func WithRPCHook(h RPCHook) Option { return func(c *cfg) { c.rpcHooks = append(c.rpcHooks, h) } }
