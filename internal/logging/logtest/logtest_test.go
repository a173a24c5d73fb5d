package logtest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/logging"
)

func TestLines(t *testing.T) {
	var l Lines
	require.Equal(t, logging.LevelDebug, l.Level())
	l.Log(logging.LevelWarn, "broker gone", "addr", "a:1")
	l.Log(logging.LevelInfo, "broker back")
	require.Equal(t, 2, l.Count("broker"))
	require.Equal(t, 1, l.Count("a:1"))
	require.Len(t, l.Lines(), 2)
	require.Equal(t, logging.LevelWarn, (&Lines{Min: logging.LevelWarn}).Level())
}
