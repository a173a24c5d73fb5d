package logging

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSlogLevelsBothWays(t *testing.T) {
	for _, lv := range []Level{LevelError, LevelWarn, LevelInfo, LevelDebug} {
		require.Equal(t, lv, LevelOf(SlogLevel(lv)), lv.String())
	}
	require.Equal(t, slog.LevelError, SlogLevel(LevelError))
	require.Equal(t, slog.LevelDebug, SlogLevel(LevelDebug))
	require.Greater(t, SlogLevel(LevelNone), slog.LevelError)
	require.Equal(t, LevelWarn, LevelOf(slog.LevelInfo+2), "in-between levels round up")
	require.Equal(t, LevelError, LevelOf(slog.LevelError+4))
	require.Equal(t, LevelDebug, LevelOf(slog.LevelDebug-4))
}

func TestSlogAdapterLevelFollowsHandler(t *testing.T) {
	var lv slog.LevelVar
	lg := Slog(slog.New(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: &lv})))
	for _, tc := range []struct {
		slog slog.Level
		want Level
	}{{slog.LevelDebug, LevelDebug}, {slog.LevelInfo, LevelInfo}, {slog.LevelWarn, LevelWarn}, {slog.LevelError, LevelError}, {slog.LevelError + 1, LevelNone}} {
		lv.Set(tc.slog)
		require.Equal(t, tc.want, lg.Level(), "handler at %v", tc.slog)
	}
}

func TestSlogAdapterWritesAttributes(t *testing.T) {
	var buf bytes.Buffer
	lg := Slog(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	require.True(t, Enabled(lg, LevelDebug))
	lg.Log(LevelWarn, "pull failed", "addr", "127.0.0.1:10911", "code", 215, "err", errors.New("boom"), slog.Int("attr", 7), "dangling")
	out := buf.String()
	require.Contains(t, out, `"level":"WARN"`)
	require.Contains(t, out, `"msg":"pull failed"`)
	require.Contains(t, out, `"addr":"127.0.0.1:10911"`)
	require.Contains(t, out, `"code":215`, "numbers stay numbers")
	require.Contains(t, out, `"err":"boom"`)
	require.Contains(t, out, `"attr":7`)
	require.Contains(t, out, `"!BADKEY":"dangling"`)

	buf.Reset()
	lg.Log(LevelNone, "never")
	require.Empty(t, buf.String())
}

func TestNilLoggersAreNop(t *testing.T) {
	require.Equal(t, LevelNone, Slog(nil).Level())
	require.Equal(t, LevelNone, Logrus(nil).Level())
	require.False(t, Enabled(Slog(nil), LevelError))
}
