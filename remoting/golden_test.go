package remoting

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// goldenFrame is the part of a frame's entry in a golden index.json that the header
// codecs must reproduce.
type goldenFrame struct {
	File             string            `json:"file"`
	SerializeType    int               `json:"serializeType"`
	HeaderLength     int               `json:"headerLength"`
	BodyLength       int               `json:"bodyLength"`
	Code             int32             `json:"code"`
	Language         string            `json:"language"`
	LanguageCode     *int              `json:"languageCode"`
	Version          int32             `json:"version"`
	Opaque           int32             `json:"opaque"`
	Flag             int32             `json:"flag"`
	Remark           *string           `json:"remark"`
	ExtFields        map[string]string `json:"extFields"`
	ExtFieldsPresent bool              `json:"extFieldsPresent"`
	ExtFieldOrder    []string          `json:"extFieldOrder"`
}

// goldenScenarios are the folders copied from ../shared/golden into testdata.
var goldenScenarios = []string{"a_produce", "b_consume_retry", "e2_mqadmin_rocketmq", "g_java_binary_longpoll"}

// loadGolden returns the frames of a scenario that were copied into testdata, with their
// bytes.
func loadGolden(t testing.TB, scenario string) ([]goldenFrame, map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", scenario)
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	require.NoError(t, err)
	var index struct {
		Frames []goldenFrame `json:"frames"`
	}
	require.NoError(t, json.Unmarshal(raw, &index))
	var frames []goldenFrame
	data := make(map[string][]byte)
	for _, f := range index.Frames {
		b, err := os.ReadFile(filepath.Join(dir, f.File))
		if errors.Is(err, os.ErrNotExist) {
			continue // not copied
		}
		require.NoError(t, err)
		frames = append(frames, f)
		data[f.File] = b
	}
	require.NotEmpty(t, frames, scenario)
	return frames, data
}

// allGoldenFrames returns the bytes of every golden frame in testdata.
func allGoldenFrames(t testing.TB) [][]byte {
	var out [][]byte
	for _, sc := range goldenScenarios {
		frames, data := loadGolden(t, sc)
		for _, f := range frames {
			out = append(out, data[f.File])
		}
	}
	return out
}

func TestGoldenFramesDecode(t *testing.T) {
	binaryFrames, jsonFrames := 0, 0
	for _, sc := range goldenScenarios {
		frames, data := loadGolden(t, sc)
		for _, g := range frames {
			t.Run(sc+"/"+g.File, func(t *testing.T) {
				cmd, err := DecodeFrame(data[g.File])
				require.NoError(t, err)
				checkGolden(t, g, cmd)
				if cmd.Serialize == SerializeRocketMQ {
					binaryFrames++
				} else {
					jsonFrames++
				}
			})
		}
	}
	require.Equal(t, 110+28, binaryFrames, "every ROCKETMQ frame of e2 and g")
	require.Positive(t, jsonFrames)
}

func checkGolden(t *testing.T, g goldenFrame, cmd *Command) {
	t.Helper()
	require.Equal(t, SerializeType(g.SerializeType), cmd.Serialize)
	require.Equal(t, g.Code, cmd.Code)
	require.Equal(t, g.Language, cmd.Language.String())
	if g.LanguageCode != nil {
		require.Equal(t, LanguageCode(*g.LanguageCode), cmd.Language)
	}
	require.Equal(t, g.Version, cmd.Version)
	require.Equal(t, g.Opaque, cmd.Opaque)
	require.Equal(t, g.Flag, cmd.Flag)
	if g.Remark == nil {
		require.Empty(t, cmd.Remark)
	} else {
		require.Equal(t, *g.Remark, cmd.Remark)
	}
	require.Len(t, cmd.Body, g.BodyLength)
	if g.SerializeType == int(SerializeJSON) {
		// JSON keeps "absent" (nil) apart from "{}" (empty, not nil).
		require.Equal(t, g.ExtFieldsPresent, cmd.ExtFields != nil, "extFields presence")
	}
	keys := make([]string, 0, len(cmd.ExtFields))
	for _, f := range cmd.ExtFields {
		keys = append(keys, f.Key)
		require.Equal(t, g.ExtFields[f.Key], f.Value, "ext field %q", f.Key)
	}
	for k, v := range g.ExtFields {
		got, ok := cmd.ExtFields.Get(k)
		require.True(t, ok, "ext field %q", k)
		require.Equal(t, v, got, "ext field %q", k)
	}
	if len(g.ExtFieldOrder) == 0 {
		require.Empty(t, keys)
	} else {
		require.Equal(t, g.ExtFieldOrder, keys, "ext field wire order")
	}
}

// Every ROCKETMQ-binary frame re-encodes to the captured bytes, ext-field order included;
// every JSON frame survives our encoder and decoder unchanged.
func TestGoldenFramesReencode(t *testing.T) {
	for _, sc := range goldenScenarios {
		frames, data := loadGolden(t, sc)
		for _, g := range frames {
			t.Run(sc+"/"+g.File, func(t *testing.T) {
				cmd, err := DecodeFrame(data[g.File])
				require.NoError(t, err)
				out, err := EncodeFrame(nil, cmd)
				require.NoError(t, err)
				if cmd.Serialize == SerializeRocketMQ {
					require.Equal(t, data[g.File], out)
				}
				again, err := DecodeFrame(out)
				require.NoError(t, err)
				require.Equal(t, cmd, again)
			})
		}
	}
}

// The frames of a scenario, concatenated, read back through a FrameReader in order.
func TestGoldenFramesStream(t *testing.T) {
	for _, sc := range goldenScenarios {
		t.Run(sc, func(t *testing.T) {
			frames, data := loadGolden(t, sc)
			var stream bytes.Buffer
			for _, g := range frames {
				stream.Write(data[g.File])
			}
			fr := NewFrameReader(&stream, 0)
			for _, g := range frames {
				cmd, err := fr.Read()
				require.NoError(t, err, g.File)
				checkGolden(t, g, cmd)
			}
			_, err := fr.Read()
			require.ErrorIs(t, err, io.EOF)
		})
	}
}
