package main

import (
	"testing"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/plugin/rmqotel"
	"github.com/rmqpush/rmqpush/plugin/rmqprom"
)

func TestHooksForEachBuildName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func([]consumer.Hook) bool
	}{
		{"benchrmqprom", func(h []consumer.Hook) bool { _, ok := h[0].(*rmqprom.Metrics); return len(h) == 1 && ok }},
		{"benchrmqotel", func(h []consumer.Hook) bool { _, ok := h[0].(*rmqotel.Metrics); return len(h) == 1 && ok }},
		{"benchrmqoteltrace", func(h []consumer.Hook) bool {
			_, m := h[0].(*rmqotel.Metrics)
			_, tr := h[1].(*rmqotel.Tracing)
			return len(h) == 2 && m && tr
		}},
	} {
		hooks, err := hooksFor(tc.name)
		if err != nil || !tc.check(hooks) {
			t.Errorf("%s: hooks %T, err %v", tc.name, hooks, err)
		}
	}
	if _, err := hooksFor("benchhooks"); err == nil {
		t.Error("an unknown build name is refused")
	}
}
