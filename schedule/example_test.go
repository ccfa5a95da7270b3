package schedule_test

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/salsaopt/salsa/schedule"
)

// A training loop with SALSA, on the 1-D mini-batch objective
// f_ξ(x) = ½(x − ξ)² with heavy-ball momentum. The scheduler asks for the
// line-search trials it needs; the loop evaluates them on the same batch.
func Example() {
	cfg, _ := schedule.Defaults(schedule.PresetPaper, 2000, 20, 0.01) // n, b, α_0
	s, _ := schedule.NewSALSA(cfg.SALSA())

	x, h, beta := 5.0, 0.0, 0.9
	noise := []float64{0.3, -0.1, 0.2, -0.4, 0.1, -0.2, 0.4, -0.3}
	for k := 1; k <= 3000; k++ {
		xi := noise[k%len(noise)]
		loss := func(x float64) float64 { return 0.5 * (x - xi) * (x - xi) }
		g := x - xi
		req, err := s.Begin(loss(x), g*g) // f(x_k) and ⟨g, s⟩ with s = g
		if err != nil {
			panic(err)
		}
		for req.Eval {
			req, _ = s.Trial(loss(x - req.Eta*g))
		}
		h = beta*h + (1-beta)*g // d_k
		x -= req.LR * h
		res, err := s.End(schedule.Observation{X1D: x * h, D2: h * h})
		if err != nil {
			panic(err)
		}
		if res.ResetMomentum {
			h = 0
		}
		for _, e := range res.Events {
			switch e.Kind {
			case schedule.KindSwitch:
				fmt.Printf("step %d: switch (%s) at lr=%.3g\n", e.Step, e.Reason, res.LR)
			case schedule.KindDrop:
				fmt.Printf("step %d: drop to lr=%.3g\n", e.Step, e.NewLR)
			}
		}
	}
	fmt.Printf("x = %.2f\n", x)
	// Output:
	// step 900: switch (slope) at lr=0.97
	// step 900: drop to lr=0.097
	// step 1800: drop to lr=0.0097
	// step 2700: drop to lr=0.00097
	// x = 0.00
}

// WithLogger sends every decision to a log/slog handler.
func ExampleWithLogger() {
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	s, _ := schedule.NewCut(schedule.CutConfig{LR0: 0.3, Tau: 0.1, DropSteps: []int{2}}, schedule.WithLogger(log))
	for range 3 {
		s.Begin(1, 0)
		s.End(schedule.Observation{})
	}
	// Output:
	// level=INFO msg="salsa event" scheduler=cut event.step=2 event.kind=drop event.new_lr=0.03 event.reason=schedule
}
