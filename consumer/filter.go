package consumer

import "github.com/rmqpush/rmqpush/message"

// MessageFilter filters pulled messages on the client, after the tag check and before
// they are cached for the listener (Java's FilterMessageHook). A message it drops is
// never given to the listener and counts as consumed: the queue's offset moves past it
// as past a message of another tag. Stats counts them per topic (FilteredMsgs).
//
// Filter runs on a connection's read loop for every pulled message, with m's topic as
// the listener would see it (the original topic of a retry, no namespace; Java's hook
// sees the topic on the wire): it must be quick, must not block, and must not keep m
// beyond the call unless it returns true (with WithLentBodies, m's body only until the
// listener call that gets m returns). A filter that panics is a bug in the filter and
// is not recovered.
type MessageFilter interface {
	// Filter reports whether the listener should get m, pulled from q.
	Filter(q message.Queue, m *message.Ext) bool
}

// MessageFilterFunc adapts a function to a MessageFilter.
type MessageFilterFunc func(q message.Queue, m *message.Ext) bool

// Filter calls f.
func (f MessageFilterFunc) Filter(q message.Queue, m *message.Ext) bool { return f(q, m) }

// WithMessageFilter adds a client-side filter; a message must pass every filter, in
// the order given. Default: none, and then filtering costs nothing.
func WithMessageFilter(f MessageFilter) Option {
	return func(c *cfg) { c.filters = append(c.filters, f) }
}

// filter returns the pull service's filter: nil without filters; with them, one that
// runs them on the message and counts those they drop. q is the queue on the wire.
func (c *PushConsumer) filter() func(q message.Queue, m *message.Ext) bool {
	if len(c.cfg.filters) == 0 {
		return nil
	}
	return func(q message.Queue, m *message.Ext) bool {
		uq := c.names.UserQueue(q)
		for _, f := range c.cfg.filters {
			if !f.Filter(uq, m) {
				c.stats.topic(q.Topic).filtered.Add(1)
				return false
			}
		}
		return true
	}
}
