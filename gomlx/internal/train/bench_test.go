package train

import (
	"bytes"
	"strings"
	"testing"
)

// Bench fails, printing nothing, rather than print an empty table.
func TestBenchRefusesEmpty(t *testing.T) {
	o := Options{Dataset: "mnist", Model: "logreg", Method: "salsa", Preset: "paper", LR0: 0.01, Epochs: 1, Batch: 4, Seed: 1, Engine: "auto"}
	p, err := NewPlan(o, 40)
	if err != nil {
		t.Fatal(err)
	}
	sp := &Split{X: make([]float32, 40*3), Y: make([]int32, 40), Dim: 3, Labels: 2}
	for _, c := range []struct {
		engines       []string
		rounds, steps int
		want          string
	}{
		{nil, 1, 1, "no engine"},
		{[]string{}, 1, 1, "no engine"},
		{[]string{"native"}, 0, 1, "0 rounds of 1 steps"},
		{[]string{"native"}, 1, 0, "1 rounds of 0 steps"},
		{[]string{"fast"}, 1, 1, `engine "fast"`},
	} {
		var w bytes.Buffer
		rows, err := Bench(c.engines, p, sp, c.rounds, c.steps, &w)
		if err == nil || !strings.Contains(err.Error(), c.want) || rows != nil || w.Len() != 0 {
			t.Errorf("%v, %d rounds, %d steps: rows %v, error %v, printed %q; want an error with %q and nothing printed",
				c.engines, c.rounds, c.steps, rows, err, w.String(), c.want)
		}
	}
}
