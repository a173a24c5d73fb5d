package remoting

import (
	"context"
	"testing"
	"time"
)

func benchPullRequest() *Command {
	c := NewRequest(11, Fields{
		{"consumerGroup", "orders-service"}, {"topic", "orders"}, {"queueId", "3"},
		{"queueOffset", "1234567"}, {"maxMsgNums", "32"}, {"sysFlag", "3"},
		{"commitOffset", "1234500"}, {"suspendTimeoutMillis", "15000"}, {"subscription", "*"},
		{"subVersion", "1796009613641"}, {"expressionType", "TAG"}, {"bname", "broker-a"},
	}, nil)
	c.Opaque = 123456
	return c
}

func benchPullResponse() *Command {
	return &Command{Code: 0, Language: LanguageJava, Version: 409, Opaque: 123456, Flag: FlagResponse, Remark: "FOUND",
		ExtFields: Fields{{"suggestWhichBrokerId", "0"}, {"nextBeginOffset", "1234599"}, {"maxOffset", "2000000"}, {"minOffset", "0"}}}
}

// BenchmarkHeader encodes a header and decodes it again.
func BenchmarkHeader(b *testing.B) {
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		for _, tc := range []struct {
			name string
			cmd  *Command
		}{{"PullRequest", benchPullRequest()}, {"PullResponse", benchPullResponse()}} {
			b.Run(st.String()+"/"+tc.name, func(b *testing.B) {
				tc.cmd.Serialize = st
				var buf []byte
				b.ReportAllocs()
				for b.Loop() {
					var err error
					buf, err = appendFrame(buf[:0], tc.cmd)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := DecodeFrame(buf); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(int64(len(buf)))
			})
		}
	}
}

// cycleReader returns the same bytes forever.
type cycleReader struct {
	data []byte
	off  int
}

func (r *cycleReader) Read(p []byte) (int, error) {
	n := copy(p, r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

// BenchmarkFrameRead reads pull responses with the bodies of a 32-message answer of
// 128 B messages (about 10 KiB: the whole body usually arrives with its header in the
// read buffer) and of 1 KiB messages (about 37 KiB: larger than the read buffer), and a
// 32 KiB body.
//
//	go test -run '^$' -bench BenchmarkFrameRead -benchmem ./remoting
func BenchmarkFrameRead(b *testing.B) {
	for _, tc := range []struct {
		name string
		body int
	}{{"32x128B", 32 * 310}, {"32x1KiB", 32 * 1206}, {"32KiB", 32 << 10}} {
		b.Run(tc.name, func(b *testing.B) {
			resp := benchPullResponse()
			resp.Body = make([]byte, tc.body)
			frame, err := EncodeFrame(nil, resp)
			if err != nil {
				b.Fatal(err)
			}
			fr := NewFrameReader(&cycleReader{data: frame}, 0)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fr.Read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchServer(b *testing.B) (*Server, *Client) {
	s, err := NewServer(WithServerHandler(11, func(sc *ServerConn, req *Command) *Command {
		resp := benchPullResponse()
		resp.Opaque = req.Opaque
		resp.Serialize = req.Serialize
		return resp
	}))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	c, err := NewClient()
	if err != nil {
		b.Fatal(err)
	}
	return s, c
}

// BenchmarkInvokeSync is one pull-shaped round trip over loopback at a time.
func BenchmarkInvokeSync(b *testing.B) {
	s, c := benchServer(b)
	defer s.Close()
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Invoke(ctx, s.Addr(), benchPullRequest()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInvokeAsync8 runs 8 callers, each with one async call in flight at a time.
func BenchmarkInvokeAsync8(b *testing.B) {
	s, c := benchServer(b)
	defer s.Close()
	defer c.Close()
	if _, err := c.Invoke(context.Background(), s.Addr(), benchPullRequest()); err != nil {
		b.Fatal(err) // dial outside the measurement
	}
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		done := make(chan error, 1)
		cb := func(_ *Command, err error) { done <- err }
		for pb.Next() {
			if err := c.InvokeAsync(s.Addr(), benchPullRequest(), 10*time.Second, cb); err != nil {
				b.Error(err)
				return
			}
			if err := <-done; err != nil {
				b.Error(err)
				return
			}
		}
	})
}
