package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBadFlags(t *testing.T) {
	var stderr strings.Builder
	require.Equal(t, 2, run(context.Background(), []string{"-consumers", "1"}, io.Discard, &stderr))
	require.Contains(t, stderr.String(), "-consumers must be at least 2")
	require.Equal(t, 2, run(context.Background(), []string{"-rate", "x"}, io.Discard, io.Discard))
	require.Equal(t, 0, run(context.Background(), []string{"-h"}, io.Discard, io.Discard))
}
