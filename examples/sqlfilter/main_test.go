package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The example runs end to end on the embedded fake cluster.
func TestExample(t *testing.T) {
	defer goleak.VerifyNone(t)
	if err := run(""); err != nil {
		t.Fatal(err)
	}
}
