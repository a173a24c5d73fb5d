package consumer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rmqpush/rmqpush/internal/client"
)

// Where a consumer without WithNameServers finds its name servers, in Java's order. Java
// reads the system property rocketmq.namesrv.addr, then the environment variable
// NAMESRV_ADDR, then asks the HTTP address service of the domain in the system property
// rocketmq.namesrv.domain. A Go process has no system properties: an environment
// variable with the property's name stands for each.
const (
	envNameServerAddr     = "rocketmq.namesrv.addr"
	envNamesrvAddr        = "NAMESRV_ADDR"
	envNameServerDomain   = "rocketmq.namesrv.domain"
	envNameServerSubgroup = "rocketmq.namesrv.domain.subgroup"
	defaultSubgroup       = "nsaddr"
)

// errNoNameServer says every way of giving name servers.
var errNoNameServer = errors.New("consumer: option WithNameServers: no name server given: use WithNameServers(\"host:port\"), " +
	"set the environment variable NAMESRV_ADDR (or rocketmq.namesrv.addr) to \"host:port;host:port\", " +
	"or name the domain of an HTTP name-server address service with WithNameServerDomain (or rocketmq.namesrv.domain)")

// WithNameServerDomain sets the domain (host, or host:port) of the HTTP service the
// name-server list is fetched from when no address is given (Java's TopAddressing):
// http://<domain>:8080/rocketmq/nsaddr, the port left out when the domain has one, and
// the path's last part taken from the environment variable
// rocketmq.namesrv.domain.subgroup when set. The list is fetched at Start, which fails
// if it cannot be had, and every 2 minutes after; a new list replaces the old one,
// routes already known staying in use. The answer must be host:port entries separated
// by ';'. Default: the environment variable rocketmq.namesrv.domain; unlike Java,
// there is no built-in domain.
func WithNameServerDomain(domain string) Option {
	return func(c *cfg) { c.nameServerDomain = domain }
}

// resolveNameServers finds the name servers as Java does: WithNameServers, then the
// environment (rocketmq.namesrv.addr, NAMESRV_ADDR), then the address service of
// WithNameServerDomain or rocketmq.namesrv.domain. getenv reads the environment. It
// also derives the namespace of an instance endpoint address and drops an http://
// prefix, as Java's ClientConfig does.
func (c *cfg) resolveNameServers(getenv func(string) string) error {
	source := "WithNameServers"
	if len(c.nameServers) == 0 {
		for _, env := range []string{envNameServerAddr, envNamesrvAddr} {
			if v := strings.TrimSpace(getenv(env)); v != "" {
				c.nameServers, source = splitAddrs(v), "the environment variable "+env
				break
			}
		}
	}
	if len(c.nameServers) == 0 {
		domain, from := c.nameServerDomain, "WithNameServerDomain"
		if domain == "" {
			domain, from = strings.TrimSpace(getenv(envNameServerDomain)), "the environment variable "+envNameServerDomain
		}
		if domain == "" {
			return errNoNameServer
		}
		if strings.ContainsAny(domain, "/ ?#") {
			return fmt.Errorf("consumer: %s: %q is not a host or host:port", from, domain)
		}
		subgroup := strings.TrimSpace(getenv(envNameServerSubgroup))
		if subgroup == "" {
			subgroup = defaultSubgroup
		}
		c.nameServerURL = client.AddrServiceURL(domain, subgroup)
		return nil
	}
	c.endpointNamespace = instanceNamespace(c.nameServers[0])
	c.nameServers = withoutHTTP(c.nameServers)
	for _, a := range c.nameServers {
		if _, err := client.ParseNameServerList(a); err != nil {
			return fmt.Errorf("consumer: option WithNameServers: from %s: %w", source, err)
		}
	}
	return nil
}

// splitAddrs splits a list separated by ';' as Java's namesrvAddr.
func splitAddrs(list string) []string {
	var out []string
	for _, part := range strings.Split(list, ";") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
