package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFlags(t *testing.T) {
	var stderr bytes.Buffer
	require.Equal(t, 2, run(context.Background(), []string{"-fish"}, io.Discard, &stderr))
	require.Contains(t, stderr.String(), "fish")
	require.Equal(t, 0, run(context.Background(), []string{"-h"}, io.Discard, io.Discard))
}
