package compare

import (
	"math"
	"strings"
	"testing"
)

// TestFieldsDiff: fields by their JSON path, and a value JSON cannot carry
// (a NaN) still compared whole rather than dropped.
func TestFieldsDiff(t *testing.T) {
	type inner struct{ WarmupGuard bool }
	type cfg struct {
		LR   float64
		Tail inner
	}
	if d := fieldsDiff(cfg{LR: 1}, cfg{LR: 1}); d != "" {
		t.Errorf("equal values: %q, want none", d)
	}
	if d, want := fieldsDiff(cfg{LR: 1, Tail: inner{false}}, cfg{LR: 1, Tail: inner{true}}), "Tail.WarmupGuard: false, here true"; d != want {
		t.Errorf("nested field: %q, want %q", d, want)
	}
	if d := fieldsDiff(cfg{LR: math.NaN(), Tail: inner{false}}, cfg{LR: math.NaN(), Tail: inner{true}}); !strings.Contains(d, "false") || !strings.Contains(d, "true") {
		t.Errorf("values with a NaN that differ elsewhere: %q, want a difference", d)
	}
}
