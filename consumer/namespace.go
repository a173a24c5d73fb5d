package consumer

import (
	"strings"

	"github.com/rmqpush/rmqpush/internal/client"
)

// WithNamespace puts the consumer's group and topics in a namespace, as Java's
// ClientConfig.setNamespace does: on the wire they are <namespace>%<name>, and the retry
// and dead-letter topics %RETRY%<namespace>%<group> and %DLQ%<namespace>%<group>. System
// topics and names that already carry the namespace are left alone. Everything the
// consumer shows (the listener's messages and queues, Stats, hooks, its own log lines
// and errors) names topics and the group without it; admin tools (mqadmin
// consumerProgress -g <namespace>%<group>) and the brokers see the wrapped names.
//
// Default: none, or, as in Java, the instance id of a name-server address of the form
// [scheme://]MQ_INST_<x>_<y>.<domain>. A namespace uses the characters of topic names
// except '%'.
func WithNamespace(ns string) Option { return func(c *cfg) { c.namespace = ns } }

// validNamespace reports whether ns may be a namespace: the characters Java allows in
// topics and groups, '%' excepted since it separates the namespace from the name.
func validNamespace(ns string) bool {
	for _, r := range ns {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '|') {
			return false
		}
	}
	return true
}

// instanceNamespace is Java's namespace from an instance endpoint
// (NameServerAddressUtils: ^(\w+://|)MQ_INST_\w+_\w+\..*, the id between the last '/'
// and the first '.'), or "".
func instanceNamespace(addr string) string {
	rest := addr
	if i := strings.Index(rest, "://"); i >= 0 {
		if !isWord(rest[:i]) || i == 0 {
			return ""
		}
		rest = rest[i+3:]
	}
	const prefix = "MQ_INST_"
	dot := strings.IndexByte(rest, '.')
	if !strings.HasPrefix(rest, prefix) || dot < 0 {
		return ""
	}
	id := rest[len(prefix):dot]
	// \w+_\w+: word characters with an underscore that has some before and after it.
	if len(id) < 3 || !isWord(id) || strings.IndexByte(id[1:len(id)-1], '_') < 0 {
		return ""
	}
	return addr[strings.LastIndexByte(addr, '/')+1 : strings.IndexByte(addr, '.')]
}

func isWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// names returns the consumer's names in its namespace: the option's, or the instance
// endpoint's.
func (c *cfg) names(group string) client.Names {
	ns := c.namespace
	if ns == "" {
		ns = c.endpointNamespace
	}
	return client.NewNames(client.Namespace(ns), group)
}

// withoutHTTP is Java's getNamesrvAddr: an address given as http://host:port is
// host:port.
func withoutHTTP(addrs []string) []string {
	for i, a := range addrs {
		if strings.HasPrefix(a, "http://") {
			addrs[i] = a[strings.LastIndexByte(a, '/')+1:]
		}
	}
	return addrs
}
