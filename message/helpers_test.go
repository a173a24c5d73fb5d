package message

import (
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// frameBody splits a remoting frame (int32 length, int32 serializeType<<24|headerLen,
// header, body) and returns its body. The real frame code lives in package remoting,
// which message must not import.
func frameBody(t testing.TB, frame []byte) []byte {
	t.Helper()
	require.GreaterOrEqual(t, len(frame), 8, "frame too short")
	require.Equal(t, len(frame)-4, int(binary.BigEndian.Uint32(frame)), "frame length field")
	headerLen := int(binary.BigEndian.Uint32(frame[4:]) & 0xFFFFFF)
	require.LessOrEqual(t, 8+headerLen, len(frame), "header length")
	return frame[8+headerLen:]
}

// goldenIndex is the part of a golden scenario's index.json the tests read.
type goldenIndex struct {
	Scenario string        `json:"scenario"`
	Frames   []goldenFrame `json:"frames"`
}

type goldenFrame struct {
	File       string          `json:"file"`
	BodyLength int             `json:"bodyLength"`
	Messages   []goldenMessage `json:"messages"`
	Batch      []goldenEntry   `json:"batch"`
}

type goldenMessage struct {
	Index                     int               `json:"index"`
	RecordOffsetInBody        int               `json:"recordOffsetInBody"`
	StoreSize                 int32             `json:"storeSize"`
	MagicCode                 int32             `json:"magicCode"`
	Topic                     string            `json:"topic"`
	QueueID                   int32             `json:"queueId"`
	QueueOffset               int64             `json:"queueOffset"`
	CommitLogOffset           int64             `json:"commitLogOffset"`
	SysFlag                   int32             `json:"sysFlag"`
	Flag                      int32             `json:"flag"`
	BornTimestamp             int64             `json:"bornTimestamp"`
	BornHost                  string            `json:"bornHost"`
	StoreTimestamp            int64             `json:"storeTimestamp"`
	StoreHost                 string            `json:"storeHost"`
	ReconsumeTimes            int32             `json:"reconsumeTimes"`
	PreparedTransactionOffset int64             `json:"preparedTransactionOffset"`
	BodyCRC                   int32             `json:"bodyCRC"`
	BodyLengthOnWire          int               `json:"bodyLengthOnWire"`
	BodyStoredBase64          []byte            `json:"bodyStoredBase64"`
	BodyLength                int               `json:"bodyLength"`
	BodyEncoding              string            `json:"bodyEncoding"`
	Body                      string            `json:"body"`
	PropertiesLength          int               `json:"propertiesLength"`
	PropertiesRaw             string            `json:"propertiesRaw"`
	PropertyOrder             []string          `json:"propertyOrder"`
	Properties                map[string]string `json:"properties"`
	MsgID                     string            `json:"msgId"`
	OffsetMsgID               string            `json:"offsetMsgId"`
}

type goldenEntry struct {
	OffsetInBody     int               `json:"offsetInBody"`
	TotalSize        int               `json:"totalSize"`
	Flag             int32             `json:"flag"`
	BodyLength       int               `json:"bodyLength"`
	PropertiesLength int               `json:"propertiesLength"`
	Properties       map[string]string `json:"properties"`
	BodyEncoding     string            `json:"bodyEncoding"`
	Body             string            `json:"body"`
	PropertiesRaw    string            `json:"propertiesRaw"`
}

// decodedBody returns the message body the index records (text or base64).
func (g *goldenMessage) decodedBody(t testing.TB) []byte {
	return goldenBytes(t, g.BodyEncoding, g.Body)
}

func goldenBytes(t testing.TB, encoding, s string) []byte {
	t.Helper()
	switch encoding {
	case "text":
		return []byte(s)
	case "base64":
		var b []byte
		require.NoError(t, json.Unmarshal([]byte(`"`+s+`"`), &b))
		return b
	}
	t.Fatalf("unknown body encoding %q", encoding)
	return nil
}

// goldenCase is one kept frame with its decoded index entry.
type goldenCase struct {
	name  string // scenario/file
	body  []byte
	frame goldenFrame
}

// loadGolden returns every frame under testdata/golden that the index describes with
// messages (store records) or batch entries and whose .bin file was kept.
func loadGolden(t testing.TB) (records, batches []goldenCase) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
		require.NoError(t, err)
		var idx goldenIndex
		require.NoError(t, json.Unmarshal(raw, &idx))
		for _, f := range idx.Frames {
			if len(f.Messages) == 0 && len(f.Batch) == 0 {
				continue
			}
			frame, err := os.ReadFile(filepath.Join(dir, f.File))
			if os.IsNotExist(err) {
				continue // not copied: the same bodies are covered by other frames
			}
			require.NoError(t, err)
			body := frameBody(t, frame)
			require.Len(t, body, f.BodyLength, f.File)
			c := goldenCase{name: filepath.Base(dir) + "/" + f.File, body: body, frame: f}
			if len(f.Messages) > 0 {
				records = append(records, c)
			} else {
				batches = append(batches, c)
			}
		}
	}
	return records, batches
}

// extFields is the comparable part of an Ext: everything but the properties, which are
// compared by their map.
type extFields struct {
	Topic                     string
	Flag                      int32
	Body                      []byte
	Properties                map[string]string
	QueueID                   int32
	StoreSize                 int32
	QueueOffset               int64
	SysFlag                   int32
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	CommitLogOffset           int64
	BodyCRC                   int32
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
}

func fieldsOf(m *Ext) extFields {
	body := m.Body
	if len(body) == 0 {
		body = nil
	}
	return extFields{
		Topic: m.Topic, Flag: m.Flag, Body: body, Properties: m.Properties.Map(),
		QueueID: m.QueueID, StoreSize: m.StoreSize, QueueOffset: m.QueueOffset, SysFlag: m.SysFlag,
		BornTimestamp: m.BornTimestamp, BornHost: m.BornHost, StoreTimestamp: m.StoreTimestamp,
		StoreHost: m.StoreHost, CommitLogOffset: m.CommitLogOffset, BodyCRC: m.BodyCRC,
		ReconsumeTimes: m.ReconsumeTimes, PreparedTransactionOffset: m.PreparedTransactionOffset,
	}
}

// genHost draws an IPv4 or IPv6 address and port.
func genHost(t *rapid.T, label string) netip.AddrPort {
	port := rapid.Uint16().Draw(t, label+"Port")
	if rapid.Bool().Draw(t, label+"V6") {
		var a [16]byte
		copy(a[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, label+"IP6"))
		if a[0] == 0 && a[1] == 0 { // keep it clearly IPv6, not v4-mapped
			a[0] = 0x20
		}
		return netip.AddrPortFrom(netip.AddrFrom16(a), port)
	}
	var a [4]byte
	copy(a[:], rapid.SliceOfN(rapid.Byte(), 4, 4).Draw(t, label+"IP4"))
	return netip.AddrPortFrom(netip.AddrFrom4(a), port)
}

var (
	genPropName  = rapid.StringMatching(`[A-Za-z_][A-Za-z0-9_%]{0,11}`)
	genPropValue = rapid.StringOfN(rapid.RuneFrom(nil, unicode.L, unicode.N, unicode.P, unicode.S, unicode.Zs), 1, 24, -1)
)

// genProperties draws 0-6 properties in the edited (pairs) form.
func genProperties(t *rapid.T) Properties {
	n := rapid.IntRange(0, 6).Draw(t, "nprops")
	var p Properties
	for range n {
		p.Set(genPropName.Draw(t, "pname"), genPropValue.Draw(t, "pvalue"))
	}
	return p
}
