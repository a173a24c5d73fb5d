package fakebroker

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// benchCluster stores n messages of size bytes in queue 0 of topic T.
func benchCluster(b *testing.B, n, size int) *Cluster {
	c, err := NewCluster(WithTopic("T", 1))
	require.NoError(b, err)
	b.Cleanup(func() { _ = c.Close() })
	body := make([]byte, size)
	msgs := make([]*message.Message, 0, n)
	for range n {
		m := &message.Message{Body: body}
		m.Properties.Set("TAGS", "TagA")
		msgs = append(msgs, m)
	}
	_, err = c.Broker("broker-a").Produce("T", 0, msgs...)
	require.NoError(b, err)
	return c
}

// BenchmarkPull pulls 32 messages per op over loopback, through a remoting.Client: the
// broker's cost plus the client's framing.
func BenchmarkPull(b *testing.B) {
	for _, size := range []int{128, 1024} {
		b.Run(fmt.Sprintf("32x%dB", size), func(b *testing.B) {
			const n = 32 * 64
			c := benchCluster(b, n, size)
			addr := c.Broker("broker-a").Addr()
			cl, err := remoting.NewClient()
			require.NoError(b, err)
			defer cl.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				req := pullRequest("G", "T", 0, int64(i%64)*32, 32, subFlag, 0, "*")
				resp, err := cl.Invoke(ctx, addr, req)
				if err != nil || resp.Code != protocol.ResponseSuccess || len(resp.Body) < 32*size {
					b.Fatalf("pull: %v %+v", err, resp)
				}
			}
			b.SetBytes(int64(32 * size))
		})
	}
}

// BenchmarkPullHandler measures the broker's side of a FOUND pull alone: decoding the
// header, reading 32 records and building the body, without the network.
func BenchmarkPullHandler(b *testing.B) {
	for _, size := range []int{128, 1024} {
		b.Run(fmt.Sprintf("32x%dB", size), func(b *testing.B) {
			const n = 32 * 64
			c := benchCluster(b, n, size)
			br := c.Broker("broker-a")
			reqs := make([]*remoting.Command, 64)
			for i := range reqs {
				reqs[i] = pullRequest("G", "T", 0, int64(i)*32, 32, subFlag, 0, "*")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				req := reqs[i%64]
				var h protocol.PullMessageRequest
				if err := h.Decode(req.ExtFields); err != nil {
					b.Fatal(err)
				}
				resp, pooled := br.pullInto(nil, req, &h, false, true)
				if resp.Code != protocol.ResponseSuccess || len(resp.Body) < 32*size {
					b.Fatalf("pull: %+v", resp)
				}
				if pooled != nil {
					br.c.bodies.Put(pooled)
				}
			}
			b.SetBytes(int64(32 * size))
		})
	}
}

// BenchmarkSend sends one 128-byte message per op over loopback (SEND_MESSAGE_V2).
func BenchmarkSend(b *testing.B) {
	c := benchCluster(b, 0, 0)
	addr := c.Broker("broker-a").Addr()
	cl, err := remoting.NewClient()
	require.NoError(b, err)
	defer cl.Close()
	h := protocol.SendMessageRequest{ProducerGroup: "pg", Topic: "T", DefaultTopic: autoCreateTopic,
		DefaultTopicQueueNums: 4, Properties: "TAGS\x01TagA\x02KEYS\x01k\x02UNIQ_KEY\x01C0A80001000000000000000000000001\x02"}
	fields := h.EncodeV2()
	body := make([]byte, 128)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resp, err := cl.Invoke(ctx, addr, remoting.NewRequest(protocol.RequestSendMessageV2, fields, body))
		if err != nil || resp.Code != protocol.ResponseSuccess {
			b.Fatalf("send: %v %+v", err, resp)
		}
	}
}

// BenchmarkProduce stores 32 messages of 128 bytes per op without a client.
func BenchmarkProduce(b *testing.B) {
	c := benchCluster(b, 0, 0)
	br := c.Broker("broker-a")
	msgs := make([]*message.Message, 32)
	for i := range msgs {
		msgs[i] = &message.Message{Body: make([]byte, 128)}
		msgs[i].Properties.Set("TAGS", "TagA")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := br.Produce("T", 0, msgs...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPullParallel pulls 32 × 128 B per op from several goroutines sharing one
// connection, as a consumer with many queues in flight does; msg/s = 32e9 / (ns/op).
func BenchmarkPullParallel(b *testing.B) {
	c := benchCluster(b, 32*64, 128)
	addr := c.Broker("broker-a").Addr()
	cl, err := remoting.NewClient()
	require.NoError(b, err)
	defer cl.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			req := pullRequest("G", "T", 0, int64(i%64)*32, 32, subFlag, 0, "*")
			resp, err := cl.Invoke(ctx, addr, req)
			if err != nil || resp.Code != protocol.ResponseSuccess {
				b.Errorf("pull: %v %+v", err, resp)
				return
			}
			i++
		}
	})
}

// BenchmarkPullHandlerSQL92 is BenchmarkPullHandler for an SQL92 subscription posted
// with the pull, which every message matches: the broker parses each record's
// properties and evaluates the expression on them.
func BenchmarkPullHandlerSQL92(b *testing.B) {
	const n = 32 * 64
	c, err := NewCluster(WithTopic("T", 1), WithPropertyFilter(true))
	require.NoError(b, err)
	b.Cleanup(func() { _ = c.Close() })
	br := c.Broker("broker-a")
	msgs := make([]*message.Message, 0, n)
	for i := range n {
		m := &message.Message{Body: make([]byte, 128)}
		m.Properties.Set("TAGS", "TagA")
		m.Properties.Set("region", []string{"eu", "us"}[i%2])
		m.Properties.Set("amount", "150")
		msgs = append(msgs, m)
	}
	_, err = br.Produce("T", 0, msgs...)
	require.NoError(b, err)
	reqs := make([]*remoting.Command, 64)
	for i := range reqs {
		reqs[i] = withField(pullRequest("G", "T", 0, int64(i)*32, 32, subFlag, 0, "region IN ('eu', 'us') AND amount > 100"),
			"expressionType", protocol.ExpressionTypeSQL92)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req := reqs[i%64]
		var h protocol.PullMessageRequest
		if err := h.Decode(req.ExtFields); err != nil {
			b.Fatal(err)
		}
		resp, pooled := br.pullInto(nil, req, &h, false, true)
		if resp.Code != protocol.ResponseSuccess || len(resp.Body) < 32*128 {
			b.Fatalf("pull: %+v", resp)
		}
		if pooled != nil {
			br.c.bodies.Put(pooled)
		}
	}
	b.SetBytes(32 * 128)
}
