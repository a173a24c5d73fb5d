package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/remoting"
)

// Config configures an Instance. The consumer validates user options; New checks only
// what would make the Instance unusable.
type Config struct {
	// NameServers are the name server addresses (host:port). Requests go to one of them
	// and fail over to the next.
	NameServers []string
	// NameServerURL, used when NameServers is empty, is the address service the list is
	// fetched from (Java's TopAddressing; see AddrServiceURL), at FetchNameServers and
	// every AddrServiceInterval (2 min).
	NameServerURL       string
	AddrServiceInterval time.Duration
	// ClientID identifies this client to the brokers (Java's ip@instanceName).
	ClientID string
	// Namespace is the namespace of the consumers' topics: send-back and its fallback
	// put the topic of a message as the listener saw it back into it.
	Namespace Namespace
	// RequestTimeout bounds every broker and name-server call that has no timeout of its
	// own (Java's mqClientApiTimeout, 3 s).
	RequestTimeout time.Duration
	// RouteInterval is how often routes are refreshed (30 s).
	RouteInterval time.Duration
	// HeartbeatInterval is how often heartbeats are sent (30 s).
	HeartbeatInterval time.Duration
	// TLS enables TLS to every server when non-nil.
	TLS *tls.Config
	// RPCHooks see every request sent and its answer, in order (Java's RPCHook).
	RPCHooks []remoting.RPCHook
	// Credentials, when set, sign every request as Java's AclClientRPCHook does, after
	// the RPCHooks ran, so the signature covers the fields they add.
	Credentials *Credentials
	// Serialize is the header serialization of requests (JSON unless set).
	Serialize remoting.SerializeType
	// Dialer replaces the TCP dialer (tests).
	Dialer remoting.ClientOption
	// IdleWork, when set, is done by the connections' read loops between frames (see
	// remoting.IdleWork), their reading taken over after IdleTakeover.
	IdleWork     remoting.IdleWork
	IdleTakeover time.Duration
	// Logger receives the instance's log lines.
	Logger logging.Logger
}

// Credentials are ACL credentials.
type Credentials struct {
	AccessKey, SecretKey, SecurityToken string
}

func (c *Config) withDefaults() (Config, error) {
	out := *c
	if len(out.NameServers) == 0 && out.NameServerURL == "" {
		return out, errors.New("client: no name server address and no address service")
	}
	if out.AddrServiceInterval <= 0 {
		out.AddrServiceInterval = DefaultAddrServiceInterval
	}
	if out.ClientID == "" {
		return out, errors.New("client: no client id")
	}
	if out.RequestTimeout <= 0 {
		out.RequestTimeout = 3 * time.Second
	}
	if out.RouteInterval <= 0 {
		out.RouteInterval = 30 * time.Second
	}
	if out.HeartbeatInterval <= 0 {
		out.HeartbeatInterval = 30 * time.Second
	}
	if out.Logger == nil {
		out.Logger = logging.Nop()
	}
	if out.Credentials != nil && (out.Credentials.AccessKey == "" || out.Credentials.SecretKey == "") {
		return out, fmt.Errorf("client: credentials need an access key and a secret key")
	}
	return out, nil
}
