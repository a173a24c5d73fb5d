package remoting

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
)

// ClientOption configures a Client; NewClient validates them all.
type ClientOption func(*clientConfig)

// Frame size limits accepted by WithMaxFrameSize and WithServerMaxFrameSize.
const (
	minMaxFrameSize = 1 << 10
	maxMaxFrameSize = 1 << 30
)

// Client defaults.
const (
	DefaultDialTimeout  = 3 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long a connection may carry nothing before it is
	// closed (Java's clientChannelMaxIdleTimeSeconds).
	DefaultIdleTimeout = 120 * time.Second
)

type clientConfig struct {
	dialTimeout  time.Duration
	maxFrameSize int
	writeTimeout time.Duration
	readTimeout  time.Duration
	idleTimeout  time.Duration
	serialize    SerializeType
	tls          *tls.Config
	dial         func(ctx context.Context, network, addr string) (net.Conn, error)
	rpcHooks     []RPCHook
	connHooks    ConnHooks
	handlers     map[int32]Handler
	idleWork     IdleWork      // WithIdleWork
	takeover     time.Duration // WithIdleWork
	errs         []error       // problems found while applying options
}

func defaultClientConfig() clientConfig {
	var d net.Dialer
	return clientConfig{
		dialTimeout:  DefaultDialTimeout,
		maxFrameSize: DefaultMaxFrameSize,
		writeTimeout: DefaultWriteTimeout,
		readTimeout:  DefaultReadTimeout,
		idleTimeout:  DefaultIdleTimeout,
		serialize:    SerializeJSON,
		dial:         d.DialContext,
		handlers:     make(map[int32]Handler),
	}
}

func (cfg *clientConfig) validate() error {
	if len(cfg.errs) > 0 {
		return errors.Join(cfg.errs...)
	}
	if cfg.dialTimeout <= 0 {
		return fmt.Errorf("remoting: WithDialTimeout(%v): must be positive", cfg.dialTimeout)
	}
	if err := checkMaxFrameSize("WithMaxFrameSize", cfg.maxFrameSize); err != nil {
		return err
	}
	if cfg.writeTimeout <= 0 {
		return fmt.Errorf("remoting: WithWriteTimeout(%v): must be positive", cfg.writeTimeout)
	}
	if cfg.readTimeout <= 0 {
		return fmt.Errorf("remoting: WithReadTimeout(%v): must be positive", cfg.readTimeout)
	}
	if cfg.idleTimeout < 0 {
		return fmt.Errorf("remoting: WithIdleTimeout(%v): must not be negative", cfg.idleTimeout)
	}
	if cfg.serialize != SerializeJSON && cfg.serialize != SerializeRocketMQ {
		return fmt.Errorf("remoting: WithSerialization(%d): must be SerializeJSON or SerializeRocketMQ", byte(cfg.serialize))
	}
	return nil
}

func checkMaxFrameSize(option string, n int) error {
	if n < minMaxFrameSize || n > maxMaxFrameSize {
		return fmt.Errorf("remoting: %s(%d): must be between %d and %d", option, n, minMaxFrameSize, maxMaxFrameSize)
	}
	return nil
}

// WithDialTimeout bounds dialing a connection, TLS handshake included. Default 3 s.
func WithDialTimeout(d time.Duration) ClientOption {
	return func(c *clientConfig) { c.dialTimeout = d }
}

// WithMaxFrameSize limits the frames the Client reads and writes, length prefix
// included, to n bytes (1 KiB to 1 GiB). A larger incoming frame closes its connection; a
// larger request fails. Default DefaultMaxFrameSize (16 MiB, Java's default).
func WithMaxFrameSize(n int) ClientOption {
	return func(c *clientConfig) { c.maxFrameSize = n }
}

// WithWriteTimeout bounds each write to a connection; a connection whose peer does not
// read for that long fails, with all its pending calls. Default 10 s.
func WithWriteTimeout(d time.Duration) ClientOption {
	return func(c *clientConfig) { c.writeTimeout = d }
}

// WithReadTimeout sets how often a connection's reads time out to check its peer: a
// frame that was arriving at one check and has not arrived in full by the next (a peer
// that stops or trickles inside a frame) closes the connection, failing its calls with
// an error wrapping ErrStalled. A quiet connection is never closed by the check: a
// broker may hold a long poll as long as the call's own timeout allows. (A call that
// times out with no frame arriving on its connection since it was sent closes the
// connection too, whatever this setting.) Default DefaultReadTimeout.
func WithReadTimeout(d time.Duration) ClientOption {
	return func(c *clientConfig) { c.readTimeout = d }
}

// WithIdleTimeout closes a connection that carried no frame for between d and 2d and
// waits for no answer and runs no handler; the next call to its address dials again.
// Default DefaultIdleTimeout; 0 keeps connections until they fail.
func WithIdleTimeout(d time.Duration) ClientOption {
	return func(c *clientConfig) { c.idleTimeout = d }
}

// WithSerialization sets the header serialization of the requests the Client sends:
// SerializeJSON (the default, what every broker accepts) or SerializeRocketMQ (binary;
// request codes must then fit in int16). Responses are decoded in whichever
// serialization they arrive.
func WithSerialization(s SerializeType) ClientOption {
	return func(c *clientConfig) { c.serialize = s }
}

// WithTLS turns TLS on with the given configuration; nil (the default) means plain TCP.
// Certificate verification is whatever cfg says: InsecureSkipVerify is the caller's
// explicit choice and is never set here. When cfg.ServerName is empty, the host part of
// each address is used, as tls.Dial does.
func WithTLS(cfg *tls.Config) ClientOption {
	return func(c *clientConfig) { c.tls = cfg }
}

// WithDialer replaces the dialer (default: a net.Dialer). It is called with a ctx bounded
// by the dial timeout and cancelled when the Client closes, network "tcp", and the
// address given to Invoke.
func WithDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) ClientOption {
	return func(c *clientConfig) {
		if dial == nil {
			c.errs = append(c.errs, errors.New("remoting: WithDialer(nil): dialer must not be nil"))
			return
		}
		c.dial = dial
	}
}

// WithRPCHook adds a hook that sees every request and response; hooks run in the order
// they were added.
func WithRPCHook(h RPCHook) ClientOption {
	return func(c *clientConfig) {
		if h == nil {
			c.errs = append(c.errs, errors.New("remoting: WithRPCHook(nil): hook must not be nil"))
			return
		}
		c.rpcHooks = append(c.rpcHooks, h)
	}
}

// WithConnHooks sets the hooks told about connections closing and bad frames.
func WithConnHooks(h ConnHooks) ClientOption {
	return func(c *clientConfig) { c.connHooks = h }
}

// WithHandler registers h for requests with the given code that the peer sends on any of
// the Client's connections. Handlers are fixed when NewClient returns. A request with a
// code that has no handler is answered REQUEST_CODE_NOT_SUPPORTED (3), unless it is
// oneway.
func WithHandler(code int32, h Handler) ClientOption {
	return func(c *clientConfig) {
		switch {
		case h == nil:
			c.errs = append(c.errs, fmt.Errorf("remoting: WithHandler(%d, nil): handler must not be nil", code))
		case c.handlers[code] != nil:
			c.errs = append(c.errs, fmt.Errorf("remoting: WithHandler(%d): a handler for code %d is already registered", code, code))
		default:
			c.handlers[code] = h
		}
	}
}
