package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/remoting"
)

// nameServers picks the name server to ask: the one that answered last, moving to the
// next when a call fails on the connection.
type nameServers struct {
	mu      sync.Mutex
	addrs   []string
	current int
}

func (n *nameServers) order() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.addrs))
	for k := range n.addrs {
		out = append(out, n.addrs[(n.current+k)%len(n.addrs)])
	}
	return out
}

func (n *nameServers) answered(addr string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, a := range n.addrs {
		if a == addr {
			n.current = k
			return
		}
	}
}

// invokeNameServer sends req to a name server, failing over to the next one when the
// call fails before an answer (connection refused, lost, or timed out). An answer with
// any response code is returned as is; when none of them answers, the error wraps
// ErrNoNameServerAnswered (see namesrv_outage.go).
func (i *Instance) invokeNameServer(ctx context.Context, newReq func() *remoting.Command) (*remoting.Command, string, error) {
	var errs []error
	order := i.nameServer.order()
	if len(order) == 0 {
		return nil, "", errors.New("client: no name-server address known (the address service has not answered yet)")
	}
	for _, addr := range order {
		callCtx, cancel := context.WithTimeout(ctx, i.cfg.RequestTimeout)
		resp, err := i.rc.Invoke(callCtx, addr, newReq())
		cancel()
		if err == nil {
			i.nameServer.answered(addr)
			i.nameServerAnswered(addr, time.Now())
			return resp, addr, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			return nil, "", errors.Join(errs...)
		}
	}
	err := fmt.Errorf("%w: %w", ErrNoNameServerAnswered, errors.Join(errs...))
	i.nameServersFailed(err, time.Now())
	return nil, "", err
}
