package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The example runs end to end on the embedded fake cluster.
func TestExample(t *testing.T) {
	defer goleak.VerifyNone(t)
	if err := run("", 400); err != nil {
		t.Fatal(err)
	}
}
