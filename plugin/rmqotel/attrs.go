package rmqotel

import (
	"maps"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// attrKind says which labels an attrKey's a and b fields hold.
type attrKind uint8

const (
	kindTopic        attrKind = iota // a = topic
	kindTopicStatus                  // a = topic, b = invocation status
	kindBrokerStatus                 // a = broker, b = invocation status
	kindTopicBroker                  // a = topic, b = broker
)

// attrKey identifies one label set.
type attrKey struct {
	kind          attrKind
	group, client string
	a, b          string
}

// attrOpts are one label set's measurement options, built once: recording with them
// allocates nothing, where building the options per measurement would.
type attrOpts struct {
	rec []metric.RecordOption
	add []metric.AddOption
}

// attrCache maps label sets to their options. Readers load a map that is never changed
// in place; new label sets (a new topic, broker or status: rare) copy it.
type attrCache struct {
	mu sync.Mutex
	m  atomic.Pointer[map[attrKey]*attrOpts]
	// calls is the listener calls' fast path: by topic alone, which hashes one short
	// string instead of four (a third of the hook's own cost before). An entry serves
	// the consumer that made it; another consumer with the same topic uses m.
	calls atomic.Pointer[map[string]*callOpts]
}

// callOpts are the label sets of one topic's listener calls.
type callOpts struct {
	group, client         string
	await, success, fails *attrOpts
}

// call returns the options of a listener call's await and process time.
func (c *attrCache) call(group, client, topic string) *callOpts {
	if m := c.calls.Load(); m != nil {
		if o := (*m)[topic]; o != nil && o.group == group && o.client == client {
			return o
		}
	}
	o := &callOpts{group: group, client: client,
		await:   c.get(attrKey{kind: kindTopic, group: group, client: client, a: topic}),
		success: c.get(attrKey{kind: kindTopicStatus, group: group, client: client, a: topic, b: statusSuccess}),
		fails:   c.get(attrKey{kind: kindTopicStatus, group: group, client: client, a: topic, b: statusFailure}),
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	next := map[string]*callOpts{}
	if m := c.calls.Load(); m != nil {
		if old := (*m)[topic]; old != nil && old.group != group {
			return o // taken by another consumer: not cached
		}
		next = maps.Clone(*m)
	}
	next[topic] = o
	c.calls.Store(&next)
	return o
}

func (c *attrCache) get(k attrKey) *attrOpts {
	if m := c.m.Load(); m != nil {
		if o := (*m)[k]; o != nil {
			return o
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var next map[attrKey]*attrOpts
	if m := c.m.Load(); m != nil {
		if o := (*m)[k]; o != nil {
			return o
		}
		next = maps.Clone(*m)
	} else {
		next = map[attrKey]*attrOpts{}
	}
	opt := metric.WithAttributeSet(k.set())
	o := &attrOpts{rec: []metric.RecordOption{opt}, add: []metric.AddOption{opt}}
	next[k] = o
	c.m.Store(&next)
	return o
}

func (k attrKey) set() attribute.Set {
	kvs := []attribute.KeyValue{attribute.String(labelGroup, k.group), attribute.String(labelClientID, k.client)}
	switch k.kind {
	case kindTopic:
		kvs = append(kvs, attribute.String(labelTopic, k.a))
	case kindTopicStatus:
		kvs = append(kvs, attribute.String(labelTopic, k.a), attribute.String(labelStatus, k.b))
	case kindBrokerStatus:
		kvs = append(kvs, attribute.String(labelBroker, k.a), attribute.String(labelStatus, k.b))
	case kindTopicBroker:
		kvs = append(kvs, attribute.String(labelTopic, k.a), attribute.String(labelBroker, k.b))
	}
	return attribute.NewSet(kvs...)
}
