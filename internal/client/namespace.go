package client

import (
	"strings"

	"github.com/rmqpush/rmqpush/message"
)

// Namespace is a client's namespace (Java's ClientConfig.namespace): the topics and
// groups it names go to the brokers as <namespace>%<name>, with the retry and
// dead-letter prefixes in front (%RETRY%<namespace>%<group>). The empty Namespace
// changes nothing. Its methods follow Java 4.9.8's NamespaceUtil rule for rule.
type Namespace string

// NamespaceSeparator joins a namespace and a name.
const NamespaceSeparator = '%'

// Wrap returns resource as the brokers know it (NamespaceUtil.wrapNamespace): system
// topics and groups, and names already in the namespace, are left alone.
func (ns Namespace) Wrap(resource string) string {
	if ns == "" || resource == "" || isSystemResource(resource) || ns.has(resource) {
		return resource
	}
	prefix, name := splitRetryDLQ(resource)
	return prefix + string(ns) + string(NamespaceSeparator) + name
}

// Unwrap returns resource as the user named it (NamespaceUtil.withoutNamespace with a
// namespace): a name in ns loses it, the retry or dead-letter prefix staying in front;
// any other name is returned as is. A plain name only loses a prefix, so it allocates
// nothing.
func (ns Namespace) Unwrap(resource string) string {
	if ns == "" || !ns.has(resource) {
		return resource
	}
	prefix, name := splitRetryDLQ(resource)
	name = name[strings.IndexByte(name, NamespaceSeparator)+1:]
	if prefix == "" {
		return name
	}
	return prefix + name
}

// has reports whether resource is already in ns (NamespaceUtil.isAlreadyWithNamespace).
func (ns Namespace) has(resource string) bool {
	if ns == "" || resource == "" || isSystemResource(resource) {
		return false
	}
	_, name := splitRetryDLQ(resource)
	return len(name) > len(ns) && name[len(ns)] == NamespaceSeparator && name[:len(ns)] == string(ns)
}

// splitRetryDLQ splits the retry or dead-letter prefix off a name.
func splitRetryDLQ(resource string) (prefix, name string) {
	switch {
	case strings.HasPrefix(resource, RetryTopicPrefix):
		return RetryTopicPrefix, resource[len(RetryTopicPrefix):]
	case strings.HasPrefix(resource, DLQTopicPrefix):
		return DLQTopicPrefix, resource[len(DLQTopicPrefix):]
	}
	return "", resource
}

// isSystemResource is NamespaceUtil.isSystemResource in 4.9.8: the topics of
// TopicValidator's system set, those starting with rmq_sys_, and the groups starting
// with CID_RMQ_SYS_.
func isSystemResource(resource string) bool {
	switch resource {
	case "TBW102", "SCHEDULE_TOPIC_XXXX", "BenchmarkTest", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRACE_TOPIC",
		"RMQ_SYS_TRANS_OP_HALF_TOPIC", "TRANS_CHECK_MAX_TIME_TOPIC", "SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT":
		return true
	}
	return strings.HasPrefix(resource, "rmq_sys_") || strings.HasPrefix(resource, "CID_RMQ_SYS_")
}

// Names are a consumer group's names on the wire and as its user gave them, computed
// once so that translating the topic of every pulled message allocates nothing.
type Names struct {
	NS         Namespace
	Group      string // the group on the wire
	UserGroup  string // the group as the user named it
	RetryTopic string // the group's retry topic on the wire
	userRetry  string // the retry topic as the user would name it
	popRetry   string // the prefix of the group's POP retry topics on the wire, %RETRY%<group>
}

// NewNames returns the names of group (named either way) in ns.
func NewNames(ns Namespace, group string) Names {
	wire := ns.Wrap(group)
	return Names{NS: ns, Group: wire, UserGroup: ns.Unwrap(wire), RetryTopic: RetryTopic(wire), userRetry: ns.Unwrap(RetryTopic(wire)),
		popRetry: RetryTopic(wire)}
}

// UserTopic returns a topic of the wire as the user names it, without allocating for
// the group's topics.
func (n *Names) UserTopic(topic string) string {
	if n.NS == "" {
		return topic
	}
	if topic == n.RetryTopic {
		return n.userRetry
	}
	return n.NS.Unwrap(topic)
}

// UserQueue returns a queue of the wire as the user names it.
func (n *Names) UserQueue(q message.Queue) message.Queue {
	q.Topic = n.UserTopic(q.Topic)
	return q
}

// ResetMessage is Java's resetRetryAndNamespace, run on every pulled message before
// anyone outside sees it: a message from the group's retry topic gets its original topic
// back (the RETRY_TOPIC property), one pulled from a POP retry topic of the group
// (%RETRY%<group>_<topic>, which a group that went from POP back to pull consumes) gets
// <topic> (Java's tryResetPopRetryTopic), and the topic loses the namespace.
func (n *Names) ResetMessage(m *message.Ext) {
	if len(m.Topic) >= len(n.popRetry) && m.Topic[0] == '%' {
		if m.Topic == n.RetryTopic {
			if orig, ok := m.Properties.Get(message.PropertyRetryTopic); ok {
				m.Topic = orig
			}
		} else if len(m.Topic) > len(n.popRetry)+1 && strings.HasPrefix(m.Topic, n.popRetry) {
			if sep := m.Topic[len(n.popRetry)]; sep == '_' || sep == '+' {
				m.Topic = m.Topic[len(n.popRetry)+1:]
			}
		}
	}
	m.Topic = n.UserTopic(m.Topic)
}
