package direction_test

import (
	"fmt"

	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/schedule"
)

// quadGrad is the gradient of f(x) = ½ Σ (i+1)(x_i − 1)², and quadLoss f.
func quadGrad(x []float64) []float64 {
	g := make([]float64, len(x))
	for i := range x {
		g[i] = float64(i+1) * (x[i] - 1)
	}
	return g
}

func quadLoss(x []float64) float64 {
	f := 0.0
	for i := range x {
		f += 0.5 * float64(i+1) * (x[i] - 1) * (x[i] - 1)
	}
	return f
}

// Schedule-Free AdamW at its reference defaults (β, ε, averaging weights)
// under a linear warmup, with a peak rate of 0.1 (its default lr 0.0025 is
// meant for networks, slow on this toy quadratic): the parameters hold y (the gradient point); Eval swaps in x for evaluation and
// Train swaps y back.
func ExampleScheduleFree() {
	x := []float64{0, 0, 0}
	dir, _ := direction.NewScheduleFree[float64](direction.DefaultScheduleFreeAdamW(), len(x))
	s, _ := schedule.NewWarmup(schedule.WarmupConfig{LR: 0.1, Steps: 20, Tau: 0.1})
	d := make([]float64, len(x))
	for k := 1; k <= 400; k++ {
		g := quadGrad(x)
		req, _ := s.Begin(quadLoss(x), 0)
		_ = dir.SetLR(req.LR)
		_ = dir.Compute(d, g, x)
		direction.Update(x, d, req.LR)
		_, _ = s.End(schedule.Observation{X1D: direction.Dot(x, d), D2: direction.Dot(d, d)})
	}
	_ = dir.Eval(x) // evaluate at x (recompute batch-norm statistics here)
	fmt.Printf("f(x) = %.1e\n", quadLoss(x))
	_ = dir.Train(x) // back to y before the next step
	// Output: f(x) = 2.5e-10
}

// Prodigy at its defaults under a constant schedule at lr 1: the direction
// holds the step size d_k and grows it from d_0 = 1e-6 towards the distance
// to the solution (here √3).
func ExampleProdigy() {
	x := []float64{0, 0, 0}
	dir, _ := direction.NewProdigy[float64](direction.DefaultProdigy(), len(x))
	s, _ := schedule.NewConstant(schedule.ConstantConfig{LR: 1, Tau: 0.1})
	d := make([]float64, len(x))
	for k := 1; k <= 200; k++ {
		g := quadGrad(x)
		req, _ := s.Begin(quadLoss(x), 0)
		_ = dir.SetLR(req.LR)
		_ = dir.Compute(d, g, x)
		direction.Update(x, d, req.LR)
		_, _ = s.End(schedule.Observation{X1D: direction.Dot(x, d), D2: direction.Dot(d, d)})
	}
	fmt.Printf("d = %.2g, f(x) = %.1e\n", dir.D(), quadLoss(x))
	// Output: d = 0.42, f(x) = 3.7e-10
}
