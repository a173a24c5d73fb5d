package pull

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/client"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/offset"
	"github.com/rmqpush/rmqpush/processqueue"
)

// The client-side filter runs after the tag check, on messages whose topic is already
// as the listener sees it (namespace gone); what it refuses is neither cached nor
// dispatched, and when it refuses everything the offset moves past them.
func TestFilterAfterTagsAndNamespace(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	h := newHarness(t, func(c *Config) {
		c.Group, c.Namespace = "ns%g", "ns"
		sd := c.Subs.(subs)["t"]
		sd.Topic = "ns%t"
		c.Subs = subs{"ns%t": sd}
		c.Filter = func(q message.Queue, m *message.Ext) bool {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, q.Topic+" "+m.Topic+" "+string(m.Body))
			return string(m.Body) != "m11"
		}
	})
	q := message.Queue{Topic: "ns%t", BrokerName: testQueue.BrokerName, QueueID: testQueue.QueueID}
	pq := processqueue.New(time.Now())
	h.svc.Submit(NewRequest(q, pq, 10))
	c := h.nextCall(t)
	require.Equal(t, "ns%g", c.h.ConsumerGroup)
	require.Equal(t, "ns%t", c.h.Topic)
	b := append(body(t, "ns%t", 10, 12, "a"), body(t, "ns%t", 12, 13, "zzz")...)
	b = append(b, body(t, "ns%t", 13, 14, "b")...)
	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 14, MaxOffset: 20, Body: b}, nil)
	<-h.disp.seen
	h.disp.mu.Lock()
	require.Len(t, h.disp.got, 2)
	require.Equal(t, "m10", string(h.disp.got[0].Body))
	require.Equal(t, "t", h.disp.got[0].Topic)
	require.Equal(t, "m13", string(h.disp.got[1].Body))
	h.disp.mu.Unlock()
	require.Equal(t, int64(2), pq.Count())
	mu.Lock()
	require.Equal(t, []string{"ns%t t m10", "ns%t t m11", "ns%t t m13"}, seen, "after the tag check; the queue as on the wire")
	mu.Unlock()

}

// When the filter refuses every message of a pull and nothing is cached, the offset
// moves past them, as for messages of another tag.
func TestFilterRefusingEverythingMovesTheOffset(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Filter = func(message.Queue, *message.Ext) bool { return false }
	})
	pq := processqueue.New(time.Now())
	r := NewRequest(testQueue, pq, 10)
	r.Lease = h.offsets.Begin(testQueue)
	h.svc.Submit(r)
	c := h.nextCall(t)
	c.cb(&client.PullResult{Status: client.PullFound, NextBeginOffset: 13, MaxOffset: 20, Body: body(t, "t", 10, 13, "a")}, nil)
	c = h.nextCall(t)
	require.Equal(t, int64(13), c.h.QueueOffset)
	off, err := h.offsets.Read(context.Background(), testQueue, offset.ReadFromMemory)
	require.NoError(t, err)
	require.Equal(t, int64(13), off)
	require.Zero(t, pq.Count())
	require.Empty(t, h.disp.got)
	c.cb(nil, context.Canceled)
}
