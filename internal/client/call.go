package client

import (
	"context"
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// invoke sends a request to addr within the request timeout (or ctx's earlier
// deadline) and returns the response when its code is one of ok; any other code is a
// *protocol.BrokerError naming the address, code and opaque.
func (i *Instance) invoke(ctx context.Context, addr string, req *remoting.Command, ok ...int32) (*remoting.Command, error) {
	return i.invokeWithin(ctx, i.cfg.RequestTimeout, addr, req, ok...)
}

// invokeWithin is invoke with its own timeout.
func (i *Instance) invokeWithin(ctx context.Context, timeout time.Duration, addr string, req *remoting.Command, ok ...int32) (*remoting.Command, error) {
	if i.closed() {
		return nil, ErrClosed
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := i.rc.Invoke(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("client: %s to %s: %w", protocol.RequestName(req.Code), addr, err)
	}
	if len(ok) == 0 {
		ok = []int32{protocol.ResponseSuccess}
	}
	for _, code := range ok {
		if resp.Code == code {
			return resp, nil
		}
	}
	return nil, protocol.NewBrokerError(addr, req, resp)
}

// answerError reports an answer whose header or body does not decode.
func answerError(addr string, resp *remoting.Command, err error) error {
	return fmt.Errorf("client: bad answer from %s (code %d, opaque %d): %w", addr, resp.Code, resp.Opaque, err)
}
