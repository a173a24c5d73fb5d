package fakebroker

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/remoting"
)

// fakeConn stands for a client connection when handlers are called without a network.
type fakeConn struct {
	addr string

	mu        sync.Mutex
	responses []*remoting.Command
	oneways   []*remoting.Command
}

func (f *fakeConn) RemoteAddr() string { return f.addr }

func (f *fakeConn) Respond(resp *remoting.Command) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.responses = append(f.responses, resp)
	return nil
}

func (f *fakeConn) InvokeOneway(req *remoting.Command) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.oneways = append(f.oneways, req)
	return nil
}

func (f *fakeConn) Invoke(context.Context, *remoting.Command) (*remoting.Command, error) {
	return nil, errors.New("fake connection: no peer to answer")
}

func (f *fakeConn) Close() {}

func (f *fakeConn) responded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.responses)
}

// offline is a cluster whose servers never start: its handlers are called directly.
type offline struct {
	c  *Cluster
	b  *Broker
	ns *NameServer
}

func newOffline(t testing.TB) *offline {
	c := &Cluster{cfg: defaultConfig(), byName: make(map[string]*Broker)}
	c.cfg.rocketMQ5 = true // the POP handlers too
	c.bodies.New = func() any { return new([]byte) }
	c.sched = newScheduler()
	t.Cleanup(c.sched.stop)
	c.ns = newNameServer(c, "127.0.0.1:0")
	b := newBroker(c, 0, "broker-a", "127.0.0.1:0")
	b.log.segSize = 64 << 10 // thousands of brokers a second: keep them small
	b.storeHost = netip.MustParseAddrPort("127.0.0.1:10911")
	b.registered = true
	c.brokers = []*Broker{b}
	c.byName["broker-a"] = b
	b.CreateTopic("T", 4, permRW)
	for _, tag := range []string{"TagA", "TagB", ""} {
		m := &message.Message{Body: []byte("seed " + tag)}
		if tag != "" {
			m.Properties.Set("TAGS", tag)
		}
		_, err := b.Produce("T", 0, m)
		require.NoError(t, err)
	}
	return &offline{c: c, b: b, ns: c.ns}
}

// handlerCodes are the codes the fuzzer drives, broker's and name server's.
func (o *offline) handlerCodes() []int32 {
	var codes []int32
	for code := range o.b.ep.handlers {
		codes = append(codes, code)
	}
	for code := range o.ns.ep.handlers {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return codes
}

func (o *offline) handler(code int32) handler {
	if h := o.b.ep.handlers[code]; h != nil {
		return h
	}
	return o.ns.ep.handlers[code]
}

// encodeFields writes ext fields as key 0x00 value 0x00 ... for the fuzzer.
func encodeFields(f remoting.Fields) string {
	var sb strings.Builder
	for _, kv := range f {
		sb.WriteString(kv.Key)
		sb.WriteByte(0)
		sb.WriteString(kv.Value)
		sb.WriteByte(0)
	}
	return sb.String()
}

func decodeFields(s string) remoting.Fields {
	parts := strings.Split(s, "\x00")
	var f remoting.Fields
	for i := 0; i+1 < len(parts); i += 2 {
		f = append(f, remoting.Field{Key: parts[i], Value: parts[i+1]})
	}
	return f
}

// FuzzHandlers feeds arbitrary headers and bodies to every handler, without a network,
// on a broker with a topic, messages and two registered consumers (by tag and SQL92).
// Nothing may panic, and a request that expects an answer gets one (or is held as a long
// poll).
func FuzzHandlers(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*-c2s-code*.bin"))
	require.NoError(f, err)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		cmd, err := remoting.DecodeFrame(data)
		require.NoError(f, err)
		f.Add(cmd.Code, encodeFields(cmd.ExtFields), cmd.Body, int16(cmd.Version), cmd.IsOneway())
	}
	f.Fuzz(func(t *testing.T, code int32, fields string, body []byte, version int16, oneway bool) {
		o := newOffline(t)
		codes := o.handlerCodes()
		if o.handler(code) == nil {
			code = codes[int(uint32(code)%uint32(len(codes)))]
		}
		h := o.handler(code)
		fc := &fakeConn{addr: "127.0.0.1:50000"}
		hb := protocol.HeartbeatData{ClientID: "cid", ConsumerDataSet: []protocol.ConsumerData{{GroupName: "G",
			ConsumeType: protocol.ConsumePassively, MessageModel: protocol.Clustering,
			SubscriptionDataSet: []protocol.SubscriptionData{{Topic: "T", SubString: "*", ExpressionType: "TAG"}}}}}
		o.b.heartBeat(fc, remoting.NewRequest(protocol.RequestHeartBeat, nil, hb.Encode(protocol.StyleFastjson)))
		// Group S filters T by SQL92, on a broker with the property filter on for bodies
		// of even length.
		o.b.cfg.propertyFilter = len(body)%2 == 0
		hb.ConsumerDataSet[0].GroupName = "S"
		hb.ConsumerDataSet[0].SubscriptionDataSet[0] = protocol.SubscriptionData{Topic: "T", SubString: "a > 1 OR TAGS = 'TagA'",
			ExpressionType: protocol.ExpressionTypeSQL92, SubVersion: 1}
		o.b.heartBeat(fc, remoting.NewRequest(protocol.RequestHeartBeat, nil, hb.Encode(protocol.StyleFastjson)))
		for range 2 { // twice: the first may change what the second meets
			req := &remoting.Command{Code: code, Language: remoting.LanguageJava, Version: int32(version),
				ExtFields: decodeFields(fields), Body: body}
			if oneway {
				req.Flag = remoting.FlagOneway
			}
			before, held := fc.responded(), o.b.HeldPulls()
			resp := h(fc, req)
			if !oneway && resp == nil && fc.responded() == before && o.b.HeldPulls() <= held {
				t.Fatalf("code %d: no answer and nothing held", code)
			}
		}
	})
}
