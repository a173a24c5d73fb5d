package logging

import (
	"bytes"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"
)

func TestEnabled(t *testing.T) {
	require.False(t, Enabled(nil, LevelError))
	require.False(t, Enabled(Nop(), LevelError))

	l := logrus.New()
	l.SetLevel(logrus.WarnLevel)
	lg := Logrus(l)
	require.True(t, Enabled(lg, LevelError))
	require.True(t, Enabled(lg, LevelWarn))
	require.False(t, Enabled(lg, LevelInfo))
	require.False(t, Enabled(lg, LevelNone))
}

func TestLogrusAdapterWritesFields(t *testing.T) {
	var buf bytes.Buffer
	l := logrus.New()
	l.SetOutput(&buf)
	l.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true, DisableColors: true})
	l.SetLevel(logrus.DebugLevel)
	lg := Logrus(l)
	require.Equal(t, LevelDebug, lg.Level())

	lg.Log(LevelWarn, "pull failed", "addr", "127.0.0.1:10911", "code", 215, "dangling")
	out := buf.String()
	require.Contains(t, out, "level=warning")
	require.Contains(t, out, `msg="pull failed"`)
	require.Contains(t, out, "addr=\"127.0.0.1:10911\"")
	require.Contains(t, out, "code=215")
	require.Contains(t, out, "dangling=\"(missing value)\"")
}

func TestLevelString(t *testing.T) {
	for lv, want := range map[Level]string{LevelNone: "none", LevelError: "error", LevelWarn: "warn", LevelInfo: "info", LevelDebug: "debug", 42: "unknown"} {
		require.Equal(t, want, lv.String())
	}
}
