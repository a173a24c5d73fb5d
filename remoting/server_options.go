package remoting

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"
)

// ServerOption configures a Server; NewServer validates them all.
type ServerOption func(*serverConfig)

type serverConfig struct {
	maxFrameSize int
	writeTimeout time.Duration
	readTimeout  time.Duration
	tls          *tls.Config
	hooks        ServerHooks
	handlers     map[int32]ServerHandler
	errs         []error
}

func defaultServerConfig() serverConfig {
	return serverConfig{
		maxFrameSize: DefaultMaxFrameSize,
		writeTimeout: DefaultWriteTimeout,
		readTimeout:  DefaultReadTimeout,
		handlers:     make(map[int32]ServerHandler),
	}
}

func (cfg *serverConfig) validate() error {
	if len(cfg.errs) > 0 {
		return errors.Join(cfg.errs...)
	}
	if err := checkMaxFrameSize("WithServerMaxFrameSize", cfg.maxFrameSize); err != nil {
		return err
	}
	if cfg.writeTimeout <= 0 {
		return fmt.Errorf("remoting: WithServerWriteTimeout(%v): must be positive", cfg.writeTimeout)
	}
	if cfg.readTimeout <= 0 {
		return fmt.Errorf("remoting: WithServerReadTimeout(%v): must be positive", cfg.readTimeout)
	}
	if cfg.tls != nil && len(cfg.tls.Certificates) == 0 && cfg.tls.GetCertificate == nil && cfg.tls.GetConfigForClient == nil {
		return errors.New("remoting: WithServerTLS: the config has no certificate (Certificates, GetCertificate or GetConfigForClient)")
	}
	return nil
}

// WithServerMaxFrameSize limits the frames the Server reads and writes, length prefix
// included, to n bytes (1 KiB to 1 GiB). A larger incoming frame closes its connection.
// Default DefaultMaxFrameSize.
func WithServerMaxFrameSize(n int) ServerOption {
	return func(c *serverConfig) { c.maxFrameSize = n }
}

// WithServerWriteTimeout bounds each write to a connection; a connection whose peer does
// not read for that long is closed. Default 10 s.
func WithServerWriteTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.writeTimeout = d }
}

// WithServerReadTimeout is WithReadTimeout for the Server's connections: a peer that
// stops or trickles inside a frame is disconnected within d to 2d. Default
// DefaultReadTimeout.
func WithServerReadTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.readTimeout = d }
}

// WithServerTLS serves TLS with cfg on every listener; nil (the default) means plain TCP.
func WithServerTLS(cfg *tls.Config) ServerOption {
	return func(c *serverConfig) { c.tls = cfg }
}

// WithServerHooks sets the hooks told about connections opening and closing, bad frames
// and accept-loop failures.
func WithServerHooks(h ServerHooks) ServerOption {
	return func(c *serverConfig) { c.hooks = h }
}

// WithServerHandler registers h for requests with the given code, like Server.Handle.
func WithServerHandler(code int32, h ServerHandler) ServerOption {
	return func(c *serverConfig) {
		switch {
		case h == nil:
			c.errs = append(c.errs, fmt.Errorf("remoting: WithServerHandler(%d, nil): handler must not be nil", code))
		case c.handlers[code] != nil:
			c.errs = append(c.errs, fmt.Errorf("remoting: WithServerHandler(%d): a handler for code %d is already registered", code, code))
		default:
			c.handlers[code] = h
		}
	}
}
