package schedule_test

import (
	"fmt"
	"log/slog"
	"math"
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

// salsa-probe on the same objective: it needs the budget, and it asks the
// loop to copy the parameters as a candidate (Result.Save), to keep the
// candidate once the next loss confirms it (Result.Confirm), to put the
// kept copy back when a rate fails (Result.Rollback) and to drop the copies
// when the decay begins (Result.Release). From there it asks the loop to
// keep the average of the decay's iterates (Result.Average); at the end the
// loop evaluates both points on validation cells and PickAverage keeps the
// average only if a paired test says it is better. Until the decay it
// reads ‖x_{k+1}‖² (Observation.X2, asked by AsksNorm), which caps the
// probe's climb at a window projected to double it.
func ExampleNew_salsaProbe() {
	cfg, _ := schedule.Defaults(schedule.PresetPaper, 2000, 20, 0.01) // n, b, α_0
	cfg.SetBudget(3000, 0)                                            // T steps: the user's epochs × steps per epoch
	s, err := schedule.New("salsa-probe", cfg)
	if err != nil {
		panic(err)
	}

	x, h, beta := 5.0, 0.0, 0.9
	cand, kept := math.NaN(), math.NaN() // the copies of x the probe asks for
	xbar, n := 0.0, 0                    // the average of the decay's iterates
	noise := []float64{0.3, -0.1, 0.2, -0.4, 0.1, -0.2, 0.4, -0.3}
	for k := 1; k <= 3000; k++ {
		xi := noise[k%len(noise)]
		loss := func(x float64) float64 { return 0.5 * (x - xi) * (x - xi) }
		g := x - xi
		req, err := s.Begin(loss(x), g*g)
		if err != nil {
			panic(err)
		}
		for req.Eval {
			req, _ = s.Trial(loss(x - req.Eta*g))
		}
		h = beta*h + (1-beta)*g
		x -= req.LR * h
		obs := schedule.Observation{X1D: x * h, D2: h * h}
		if schedule.AsksNorm(s) { // until the decay: ‖x_{k+1}‖², for the cap on the probe's climb
			obs.X2 = x * x
		}
		res, err := s.End(obs)
		if err != nil {
			panic(err)
		}
		if res.Save { // a candidate: x after an accepted window
			cand = x
		}
		if res.Confirm { // the next loss, at the candidate, was no outlier
			kept = cand
		}
		if res.Rollback {
			x = kept
		}
		if res.Release {
			cand, kept = math.NaN(), math.NaN()
		}
		if res.ResetMomentum {
			h = 0
		}
		if res.Average { // after any Rollback
			n++
			xbar += (x - xbar) / float64(n)
		}
		for _, e := range res.Events {
			switch {
			case e.Kind == schedule.KindProbe && e.Reason == "start":
				fmt.Printf("step %d: probe starts, testing lr=%.3g\n", e.Step, e.NewLR)
			case e.Kind == schedule.KindProbe && e.Accept:
				fmt.Printf("step %d: the window at lr=%.3g is kept (mean loss %.3f, last kept %.3f)\n", e.Step, e.NewLR, e.Mean, e.Prev)
			case e.Kind == schedule.KindProbe: // a rejected window, or outliers (e.Reason)
				fmt.Printf("step %d: the window at lr=%.3g fails (mean loss %.3f, last kept %.3f)\n", e.Step, e.NewLR, e.Mean, e.Prev)
			case e.Kind == schedule.KindDecay:
				fmt.Printf("step %d: decay to 0 from lr=%.3g (%s)\n", e.Step, e.NewLR, e.Reason)
			}
		}
	}
	// the validation cells: the loss at other noise, at x and at the average
	val := []float64{0.25, -0.15, 0.05, -0.35, 0.15, -0.05, 0.35, -0.25}
	gain := make([]float64, len(val))
	for i, v := range val {
		gain[i] = 0.5*(x-v)*(x-v) - 0.5*(xbar-v)*(xbar-v)
	}
	ev, err := s.(*schedule.Tail).PickAverage(gain, "loss")
	if err != nil {
		panic(err)
	}
	if ev.Accept {
		x = xbar
	}
	fmt.Printf("step %d: the average of %d iterates kept: %v (z = %.3g)\n", ev.Step, n, ev.Accept, ev.Z)
	fmt.Printf("|x| = %.2f\n", math.Abs(x))
	// Output:
	// step 191: probe starts, testing lr=1.94
	// step 341: the window at lr=1.94 is kept (mean loss 0.045, last kept 0.116)
	// step 491: the window at lr=3.88 fails (mean loss 0.068, last kept 0.045)
	// step 491: decay to 0 from lr=0.97 (rollback)
	// step 3000: the average of 2510 iterates kept: false (z = -0.000165)
	// |x| = 0.00
}

// A loop of your own with the probe's validation check (TailConfig.ProbeVal,
// --set probe_val=1): when End sets NeedVal, the step's decisions wait for
// the validation loss at the parameters after the update, reported with
// ReportVal, whose Result replaces End's. Here the validation loss is the
// loss at ξ = 0.
func ExampleTail_ReportVal() {
	cfg, _ := schedule.Defaults(schedule.PresetPaper, 2000, 20, 0.01)
	cfg.SetBudget(3000, 0)
	cfg.Tail.ProbeVal = true
	s, err := schedule.New("salsa-probe", cfg)
	if err != nil {
		panic(err)
	}
	va := s.(schedule.ValAsker)

	x, h, beta := 5.0, 0.0, 0.9
	cand, kept := math.NaN(), math.NaN()
	noise := []float64{0.3, -0.1, 0.2, -0.4, 0.1, -0.2, 0.4, -0.3}
	for k := 1; k <= 3000; k++ {
		xi := noise[k%len(noise)]
		loss := func(x float64) float64 { return 0.5 * (x - xi) * (x - xi) }
		g := x - xi
		req, err := s.Begin(loss(x), g*g)
		if err != nil {
			panic(err)
		}
		for req.Eval {
			req, _ = s.Trial(loss(x - req.Eta*g))
		}
		h = beta*h + (1-beta)*g
		x -= req.LR * h
		res, err := s.End(schedule.Observation{X1D: x * h, D2: h * h})
		if err == nil && res.NeedVal {
			res, err = va.ReportVal(0.5 * x * x) // the validation loss at x_{k+1}
		}
		if err != nil {
			panic(err)
		}
		if res.Save {
			cand = x
		}
		if res.Confirm {
			kept = cand
		}
		if res.Rollback {
			x = kept
		}
		if res.ResetMomentum {
			h = 0
		}
		for _, e := range res.Events {
			switch e.Kind {
			case schedule.KindValidation:
				fmt.Printf("step %d: validation loss %.4f asked for (reference %.4f)\n", e.Step, e.ValLoss, e.BestLoss)
			case schedule.KindDecay:
				fmt.Printf("step %d: decay to 0 from lr=%.3g (%s)\n", e.Step, e.NewLR, e.Reason)
			}
		}
	}
	fmt.Printf("|x| = %.2f\n", math.Abs(x))
	// Output:
	// step 191: validation loss 0.0002 asked for (reference +Inf)
	// step 341: validation loss 0.0016 asked for (reference 0.0002)
	// step 491: decay to 0 from lr=0.97 (rollback)
	// |x| = 0.00
}
