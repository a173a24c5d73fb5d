package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rmqpush/rmqpush/remoting"
)

// addGoldenSeeds adds the bodies of the named golden requests to f's corpus.
func addGoldenSeeds(f *testing.F, names ...string) {
	for _, fr := range goldenBodies(f, loadGolden(f), names...) {
		f.Add(fr.body(f))
	}
}

// touch reads every node with every accessor; none may panic.
func touch(v Value) {
	_, _ = v.Int64()
	_, _ = v.Int32()
	_, _ = v.Float64()
	_, _ = v.Bool()
	_, _ = v.Str()
	_, _ = v.Elems()
	_ = v.Get("topic")
	_, _ = decodeQueue(v)
	for i := range v.kids {
		touch(v.kids[i])
	}
}

func FuzzFastJSON(f *testing.F) {
	addGoldenSeeds(f, "GET_ROUTEINFO_BY_TOPIC", "GET_CONSUMER_RUNNING_INFO", "RESET_CONSUMER_CLIENT_OFFSET",
		"GET_CONSUME_STATS", "GET_BROKER_CLUSTER_INFO", "HEART_BEAT", "CONSUME_MESSAGE_DIRECTLY")
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			var je *JSONError
			if !errors.As(err, &je) || je.Offset < 0 || je.Offset > len(data) {
				t.Fatalf("error without a valid offset: %v", err)
			}
			return
		}
		touch(v)

		// Fastjson style keeps every key as it was.
		w := NewWriter(StyleFastjson)
		w.Value(v)
		back, err := Parse(w.Bytes())
		if err != nil {
			t.Fatalf("re-reading fastjson-style output %q: %v", w.Bytes(), err)
		}
		if !valueEqual(v, back) {
			t.Fatalf("fastjson-style round trip changed the tree: %q", w.Bytes())
		}

		// Standard style turns non-string keys into strings, and is strict JSON.
		w = NewWriter(StyleStandard)
		w.Value(v)
		if !json.Valid(w.Bytes()) {
			t.Fatalf("standard output is not JSON: %q", w.Bytes())
		}
		back, err = Parse(w.Bytes())
		if err != nil {
			t.Fatalf("re-reading standard output %q: %v", w.Bytes(), err)
		}
		if !valueEqual(stringKeys(v), back) {
			t.Fatalf("standard round trip changed the tree: %q", w.Bytes())
		}

		w = NewWriter(StyleBrowserCompatible)
		w.Value(v)
		if !json.Valid(w.Bytes()) {
			t.Fatalf("browser-compatible output is not JSON: %q", w.Bytes())
		}
		for _, c := range w.Bytes() {
			if c >= 0x80 {
				t.Fatalf("browser-compatible output has a non-ASCII byte: %q", w.Bytes())
			}
		}
	})
}

// fuzzBody checks a body decoder: no panic, and whatever decodes re-encodes, in every
// style, to bytes that decode to the same value.
func fuzzBody(t *testing.T, data []byte, newBody func() body, extra ...func(body) []byte) {
	first := newBody()
	if err := first.Decode(data); err != nil {
		var je *JSONError
		if !errors.As(err, &je) {
			t.Fatalf("decode error without an offset: %v", err)
		}
		return
	}
	encoders := []func(body) []byte{
		func(b body) []byte { return b.Encode(StyleStandard) },
		func(b body) []byte { return b.Encode(StyleFastjson) },
		func(b body) []byte { return b.Encode(StyleBrowserCompatible) },
	}
	for i, enc := range append(encoders, extra...) {
		once := enc(first)
		second := newBody()
		if err := second.Decode(once); err != nil {
			t.Fatalf("encoder %d: re-decoding %q: %v", i, once, err)
		}
		if twice := enc(second); !bytes.Equal(once, twice) {
			t.Fatalf("encoder %d: not stable:\n%q\n%q", i, once, twice)
		}
	}
}

func FuzzTopicRouteData(f *testing.F) {
	addGoldenSeeds(f, "GET_ROUTEINFO_BY_TOPIC")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func() body { return &TopicRouteData{} })
		var r TopicRouteData
		if r.Decode(data) == nil {
			for _, qd := range r.QueueDatas {
				_ = r.ReadableQueues("t")
				_ = r.WritableQueues("t")
				_, _ = r.MasterAddr(qd.BrokerName)
				_, _ = r.AnyAddr(qd.BrokerName)
			}
		}
	})
}

func FuzzHeartbeat(f *testing.F) {
	addGoldenSeeds(f, "HEART_BEAT")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func() body { return &HeartbeatData{} })
	})
}

func FuzzResetOffsetBody(f *testing.F) {
	addGoldenSeeds(f, "RESET_CONSUMER_CLIENT_OFFSET", "INVOKE_BROKER_TO_RESET_OFFSET")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func() body { return &ResetOffsetBody{} },
			func(b body) []byte { return b.(*ResetOffsetBody).EncodeList(StyleStandard) })
	})
}

// packFields joins ext fields as key NUL value NUL ..., the input form of FuzzHeaders.
func packFields(f remoting.Fields) []byte {
	var b []byte
	for _, e := range f {
		b = append(b, e.Key...)
		b = append(b, 0)
		b = append(b, e.Value...)
		b = append(b, 0)
	}
	return b
}

func unpackFields(data []byte) remoting.Fields {
	parts := bytes.Split(data, []byte{0})
	var f remoting.Fields
	for i := 0; i+1 < len(parts); i += 2 {
		f = append(f, remoting.Field{Key: string(parts[i]), Value: string(parts[i+1])})
	}
	return f
}

// FuzzHeaders decodes arbitrary ext fields with every header type: no panic, and what
// decodes re-encodes to fields that decode to the same fields again.
func FuzzHeaders(f *testing.F) {
	for _, fr := range loadGoldenFrom(f, append(goldenScenarios, goldenScenarios5x...)...) {
		if len(fr.ExtFields) > 0 {
			f.Add(packFields(fr.fields()))
		}
	}
	for _, tc := range headerCases() {
		f.Add(packFields(tc.full.Encode()))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fields := unpackFields(data)
		for _, tc := range headerCases() {
			h := fresh(tc.full)
			if err := h.Decode(fields); err != nil {
				var he *HeaderError
				if !errors.As(err, &he) {
					t.Fatalf("%s: error is not a *HeaderError: %v", tc.name, err)
				}
				continue
			}
			once := h.Encode()
			h2 := fresh(tc.full)
			if err := h2.Decode(once); err != nil {
				t.Fatalf("%s: re-decoding %v: %v", tc.name, once, err)
			}
			if twice := h2.Encode(); !reflect.DeepEqual(once, twice) {
				t.Fatalf("%s: not stable:\n%v\n%v", tc.name, once, twice)
			}
		}
	})
}

// addGolden5xSeeds adds the bodies of the named golden 5.x requests and answers.
func addGolden5xSeeds(f *testing.F, names ...string) {
	for _, fr := range goldenBodies(f, loadGoldenFrom(f, goldenScenarios5x...), names...) {
		f.Add(fr.body(f))
	}
}

func FuzzQueryAssignment(f *testing.F) {
	addGolden5xSeeds(f, "QUERY_ASSIGNMENT")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func() body { return &QueryAssignmentRequest{} })
		fuzzBody(t, data, func() body { return &QueryAssignmentResponse{} })
	})
}

func FuzzSetMessageRequestMode(f *testing.F) {
	addGolden5xSeeds(f, "SET_MESSAGE_REQUEST_MODE")
	f.Fuzz(func(t *testing.T, data []byte) {
		var b SetMessageRequestModeRequest
		if b.Decode(data) != nil {
			return // a mode error carries no offset: checked by TestGoldenSetMessageRequestMode
		}
		var back SetMessageRequestModeRequest
		if err := back.Decode(b.Encode(StyleStandard)); err != nil || back != b {
			t.Fatalf("round trip: %+v %+v %v", b, back, err)
		}
	})
}

func FuzzBatchAck(f *testing.F) {
	a := BatchAck{ConsumerGroup: "g", Topic: "t", Retry: TopicMarkRetry, StartOffset: 7, QueueID: 1, PopTime: 1796177259844, InvisibleTime: 60000}
	a.Set(0)
	a.Set(70)
	f.Add((&BatchAckRequest{BrokerName: "b", Acks: []BatchAck{a}}).Encode(StyleStandard))
	f.Add([]byte(`{"acks":[{"consumerGroup":"g","topic":"t","retry":"0","bitSet":[1,0,2]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b BatchAckRequest
		if b.Decode(data) != nil {
			return
		}
		once := b.Encode(StyleStandard)
		var back BatchAckRequest
		if err := back.Decode(once); err != nil {
			t.Fatalf("re-decoding %q: %v", once, err)
		}
		if twice := back.Encode(StyleStandard); !bytes.Equal(once, twice) {
			t.Fatalf("not stable:\n%q\n%q", once, twice)
		}
		for _, x := range back.Acks {
			_ = x.Offsets()
		}
	})
}

// FuzzPopHandle reads arbitrary POP_CK values and offset infos: no panic, and what
// reads writes back as it read.
func FuzzPopHandle(f *testing.F) {
	f.Add("0 1796177259844 60000 0 0 broker-5a 1 3", "0 0 0;0 1 0", "0 0 0,1,2;0 1 0,1")
	f.Add("0 1796177274898 60000 2 1 broker-5a 0 0", "1 0 0", "1 0 0")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, ck, start, msgs string) {
		if e, err := ParseExtraInfo(ck); err == nil {
			back, err := ParseExtraInfo(e.String())
			if err != nil || back != e {
				t.Fatalf("handle %q: %+v, back %+v, %v", ck, e, back, err)
			}
		}
		offs, err := ParsePopOffsets(start, msgs)
		if err != nil {
			return
		}
		var sb, mb []byte
		for _, q := range offs {
			if q.StartOffset >= 0 {
				sb = AppendStartOffsetInfo(sb, q.TopicMark, q.QueueID, q.StartOffset)
			}
			if len(q.Offsets) > 0 {
				mb = AppendMsgOffsetInfo(mb, q.TopicMark, q.QueueID, q.Offsets)
			}
		}
		if _, err := ParsePopOffsets(string(sb), string(mb)); err != nil {
			t.Fatalf("re-reading %q %q: %v", sb, mb, err)
		}
	})
}

// FuzzParseDecimal: parseDecimal is strconv.ParseInt in base 10, for 32 and 64 bits:
// the same value, and an error for the same inputs.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "7", "-1", "+5", "2147483647", "2147483648", "999999999999999999",
		"9223372036854775807", "9223372036854775808", "00012", "1_000", "", " 1", "1a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, bits := range []int{32, 64} {
			got, gerr := parseDecimal(s, bits)
			want, werr := strconv.ParseInt(s, 10, bits)
			if got != want || (gerr == nil) != (werr == nil) {
				t.Fatalf("%q, %d bits: %d, %v; strconv: %d, %v", s, bits, got, gerr, want, werr)
			}
		}
	})
}

// FuzzParseExtraInfo: the one-pass reading of a handle agrees with the field-by-field
// one wherever it accepts the input, and accepts every handle a broker writes.
func FuzzParseExtraInfo(f *testing.F) {
	for _, s := range []string{"0 1796177259844 60000 0 0 broker-5a 1 3", "0 1796177274898 60000 2 1 broker-5a 0 0",
		"12 1 2 3 2 b 4 5 extra", "0 1 2 3 0  1 3", "0 1 2 3 3 b 1 3", "0 1 2 2147483648 0 b 1 3", "0 1 2 3 0 b 1",
		"0 1 2 3 0 b 1 ", "-1 1 2 3 0 b 1 3", "0 1 2 3 0 b 1 1234567890123456789", " 0 1 2 3 0 b 1 3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := parseExtraInfoFields(s)
		if got, ok := parsePlainExtraInfo(s); ok && (werr != nil || got != want) {
			t.Fatalf("%q: one pass %+v; field by field %+v, %v", s, got, want, werr)
		}
		plain := func(n int64) bool { return n >= 0 && n < 1e18 }
		if werr == nil && want.BrokerName != "" && !strings.Contains(want.BrokerName, " ") && plain(want.CkQueueOffset) &&
			plain(want.PopTime) && plain(want.InvisibleTime) && want.ReviveQID >= 0 && want.QueueID >= 0 && plain(want.QueueOffset) {
			written := want.String()
			if got, ok := parsePlainExtraInfo(written); !ok || got != want {
				t.Fatalf("%q as a broker writes it, %q: one pass %+v, %v", s, written, got, ok)
			}
		}
	})
}
