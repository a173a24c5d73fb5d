package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// ErrClosed is returned by calls on an Instance after Shutdown.
var ErrClosed = errors.New("client: instance shut down")

// Instance is a client instance; see the package documentation.
type Instance struct {
	cfg Config
	log logging.Logger
	rc  *remoting.Client

	mu        sync.RWMutex
	consumers map[string]Consumer // by group
	routes    routeTable

	nameServer nameServers
	nsOutage   nsOutage     // no name server answers: see namesrv_outage.go
	addrs      *addrService // where the name-server list comes from; nil for a fixed list
	routeMu    sync.Mutex   // one route fetch at a time, so an older answer never replaces a newer
	retrySeq   atomic.Int64 // spreads retry fallback sends over the retry queues
	assignSeq  atomic.Int64 // spreads QUERY_ASSIGNMENT over the masters

	lifeMu   sync.Mutex
	started  bool
	shutdown bool
	ctx      context.Context // cancelled by Shutdown; ends calls in flight
	cancel   context.CancelFunc
	done     chan struct{} // closed when the scheduler ends
	kick     chan struct{} // asks the scheduler for a heartbeat now
	refresh  chan struct{} // asks the scheduler for a route refresh now
}

// New returns an Instance for cfg. It does not connect to anything until used.
func New(cfg Config) (*Instance, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	inst := &Instance{
		cfg:        c,
		log:        c.Logger,
		consumers:  make(map[string]Consumer),
		routes:     newRouteTable(),
		nameServer: nameServers{addrs: append([]string(nil), c.NameServers...)},
		done:       make(chan struct{}),
		kick:       make(chan struct{}, 1),
		refresh:    make(chan struct{}, 1),
	}
	opts := []remoting.ClientOption{
		remoting.WithSerialization(c.Serialize),
		remoting.WithConnHooks(remoting.ConnHooks{
			OnConnClosed: inst.connClosed,
			OnBadFrame:   inst.badFrame,
		}),
		remoting.WithHandler(protocol.RequestNotifyConsumerIDsChanged, inst.handleNotifyConsumerIDsChanged),
		remoting.WithHandler(protocol.RequestResetConsumerClientOffset, inst.handleResetOffset),
		remoting.WithHandler(protocol.RequestGetConsumerStatusFromClient, inst.handleConsumerStatus),
		remoting.WithHandler(protocol.RequestGetConsumerRunningInfo, inst.handleRunningInfo),
		remoting.WithHandler(protocol.RequestConsumeMessageDirectly, inst.handleConsumeMessageDirectly),
	}
	if c.TLS != nil {
		opts = append(opts, remoting.WithTLS(c.TLS))
	}
	for _, h := range c.RPCHooks {
		opts = append(opts, remoting.WithRPCHook(h))
	}
	if c.Credentials != nil {
		opts = append(opts, remoting.WithRPCHook(newACLHook(*c.Credentials)))
	}
	if c.Dialer != nil {
		opts = append(opts, c.Dialer)
	}
	if c.IdleWork != nil {
		opts = append(opts, remoting.WithIdleWork(c.IdleWork, c.IdleTakeover))
	}
	rc, err := remoting.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	inst.rc = rc
	if len(c.NameServers) == 0 {
		inst.addrs = newAddrService(c.NameServerURL)
	}
	inst.ctx, inst.cancel = context.WithCancel(context.Background())
	return inst, nil
}

// ClientID returns the id this instance reports to brokers.
func (i *Instance) ClientID() string { return i.cfg.ClientID }

// NameServers returns the name server addresses in use.
func (i *Instance) NameServers() []string {
	i.nameServer.mu.Lock()
	defer i.nameServer.mu.Unlock()
	return append([]string(nil), i.nameServer.addrs...)
}

// Register adds a consumer for its group. A group can be registered once.
func (i *Instance) Register(group string, c Consumer) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if _, ok := i.consumers[group]; ok {
		return fmt.Errorf("client: a consumer of group %q is already registered with this instance", group)
	}
	i.consumers[group] = c
	return nil
}

// Unregister removes the group's consumer and tells every broker (UNREGISTER_CLIENT),
// so the rest of the group rebalances at once instead of after the broker's 120 s
// channel expiry. It returns the joined errors of the brokers that could not be told.
func (i *Instance) Unregister(ctx context.Context, group string) error {
	i.mu.Lock()
	delete(i.consumers, group)
	i.mu.Unlock()
	return i.unregisterClient(ctx, group)
}

func (i *Instance) consumer(group string) (Consumer, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	c, ok := i.consumers[group]
	return c, ok
}

func (i *Instance) consumerList() []Consumer {
	i.mu.RLock()
	defer i.mu.RUnlock()
	out := make([]Consumer, 0, len(i.consumers))
	for _, c := range i.consumers {
		out = append(out, c)
	}
	return out
}

// Start launches the scheduler (route refresh and heartbeat). It does not contact any
// server itself: the consumer fetches routes and sends the first heartbeat in its own
// Start so it can report their errors.
func (i *Instance) Start() error {
	i.lifeMu.Lock()
	defer i.lifeMu.Unlock()
	if i.shutdown {
		return ErrClosed
	}
	if i.started {
		return nil
	}
	i.started = true
	go i.schedule()
	return nil
}

// Shutdown stops the scheduler, closes every connection and waits for every goroutine
// the Instance started. It does not unregister consumers; call Unregister first.
func (i *Instance) Shutdown() {
	i.lifeMu.Lock()
	if i.shutdown {
		i.lifeMu.Unlock()
		return
	}
	i.shutdown = true
	started := i.started
	i.cancel()
	i.lifeMu.Unlock()
	if started {
		<-i.done
	}
	_ = i.rc.Close() // Close never fails for a Client; the error is the interface's.
}

func (i *Instance) closed() bool { return i.ctx.Err() != nil }

func (i *Instance) connClosed(addr string, err error) {
	if !errors.Is(err, remoting.ErrClosed) && logging.Enabled(i.log, logging.LevelInfo) {
		i.log.Log(logging.LevelInfo, "connection closed", "addr", addr, "err", err)
	}
}

func (i *Instance) badFrame(addr string, err error) {
	if logging.Enabled(i.log, logging.LevelError) {
		i.log.Log(logging.LevelError, "bad frame from server; connection closed", "addr", addr, "err", err)
	}
}
