package salsa_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/schedule"
)

// A training loop with SALSA, the QHM direction (heavy ball) and L2 weight
// decay wd, on logistic regression. The objective on a mini-batch is
// f(x) = mean log-loss + ½·wd·‖x‖², and everything the scheduler sees is of
// that f: the loss given to Begin and to Trial includes the L2 term, g is
// ∇f (wd·x included) before Begin, and the line search runs along that g.
// The direction is computed from the same g afterwards, so QHMConfig has no
// WeightDecay of its own (it would add wd·x to g a second time).
func Example_weightDecay() {
	const n, b, wd = 1000, 10, 1e-2
	data := toyData(n)
	dim := len(data[0].a)

	cfg, _ := schedule.Defaults(schedule.PresetPaper, n, b, 0.1) // n examples, batch b, α_0
	s, _ := schedule.NewSALSA(cfg.SALSA())
	dir, _ := direction.NewQHM[float64](direction.QHMConfig{Beta: 0.9, Nu: 1}, dim) // no WeightDecay: g has wd·x
	x, g, d, xt := make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, dim)

	for k := range 30 * n / b { // 30 epochs
		batch := data[k*b%n : k*b%n+b] // the k-th mini-batch, in order

		f := lossGrad(g, x, batch, wd)              // f(x_k) with ½·wd·‖x‖², g = ∇f with wd·x
		req, err := s.Begin(f, direction.Dot(g, g)) // the line search runs along g: ⟨g,s⟩ = ⟨g,g⟩
		for err == nil && req.Eval {                // SSLS asks for trial points, on the same batch
			for i := range xt {
				xt[i] = x[i] - req.Eta*g[i]
			}
			req, err = s.Trial(loss(xt, batch, wd)) // with ½·wd·‖x‖² too
		}
		if err != nil {
			panic(err) // a NaN or ±Inf loss
		}
		if err := dir.Compute(d, g, x); err != nil { // d from the full g, after the line search
			panic(err)
		}
		direction.Update(x, d, req.LR) // x ← x − α d
		res, err := s.End(schedule.Observation{X1D: direction.Dot(x, d), D2: direction.Dot(d, d)})
		if err != nil {
			panic(err)
		}
		if res.ResetMomentum {
			dir.Reset() // after a drop
		}
		for _, e := range res.Events {
			switch e.Kind {
			case schedule.KindSwitch:
				fmt.Printf("step %d: switch to SASA+ (%s) at lr=%.3g\n", e.Step, e.Reason, res.LR)
			case schedule.KindDrop:
				fmt.Printf("step %d: drop to lr=%.3g\n", e.Step, e.NewLR)
			}
		}
	}
	fmt.Printf("lr = %.3g, f = %.4f\n", s.LR(), loss(x, data, wd))
	// Output:
	// step 900: switch to SASA+ (slope) at lr=15.6
	// step 900: drop to lr=1.56
	// step 1800: drop to lr=0.156
	// step 2700: drop to lr=0.0156
	// lr = 0.0156, f = 0.3161
}

// example is one labelled example of the toy problem.
type example struct {
	a []float64 // features
	y float64   // label, 0 or 1
}

// toyData draws n examples of a noisy linear classifier in 4 dimensions.
func toyData(n int) []example {
	r := rand.New(rand.NewPCG(1, 2))
	w := []float64{2, -1, 0.5, 1}
	data := make([]example, n)
	for j := range data {
		a := make([]float64, len(w))
		z := 0.0
		for i := range a {
			a[i] = r.NormFloat64()
			z += w[i] * a[i]
		}
		if z+r.NormFloat64() > 0 {
			data[j].y = 1
		}
		data[j].a = a
	}
	return data
}

// loss returns f(x) = mean log-loss of the batch + ½·wd·‖x‖².
func loss(x []float64, batch []example, wd float64) float64 {
	return lossGrad(nil, x, batch, wd)
}

// lossGrad returns f(x) as loss does and, if g is not nil, writes
// g = ∇f(x) = mean (σ(⟨a,x⟩) − y)·a + wd·x.
func lossGrad(g, x []float64, batch []example, wd float64) float64 {
	for i := range g {
		g[i] = 0
	}
	f := 0.0
	for _, e := range batch {
		z := direction.Dot(e.a, x)
		f += math.Log1p(math.Exp(-math.Abs(z))) + math.Max(z, 0) - e.y*z // log(1+e^z) − y·z
		p := 1 / (1 + math.Exp(-z))
		for i := range g {
			g[i] += (p - e.y) * e.a[i] / float64(len(batch))
		}
	}
	f /= float64(len(batch))
	for i := range g {
		g[i] += wd * x[i]
	}
	return f + 0.5*wd*direction.Dot(x, x)
}

// TestWeightDecayOrder checks the order of Example_weightDecay against the
// one the README used to show: Begin and the trials along the raw mini-batch
// gradient, then QHMConfig.WeightDecay adding wd·x to g inside Compute. SSLS's
// Armijo test f(x − η·g) ≤ f(x) − c·η·⟨g,g⟩ assumes that ⟨g,g⟩ is the slope
// of the loss it is given along g. In the example's order it is (checked by a
// central difference at every step); in the old one ⟨g,g⟩ misses wd·⟨x,g⟩,
// and the run ends at another learning rate than the example's.
func TestWeightDecayOrder(t *testing.T) {
	lr, slopeErr := weightDecayToy(false)
	if got := fmt.Sprintf("%.3g", lr); got != "0.0156" {
		t.Errorf("example order: final lr = %s, want Example_weightDecay's 0.0156", got)
	}
	if slopeErr > 1e-6 {
		t.Errorf("example order: ⟨g,g⟩ given to Begin is off the slope of the loss along g by %.3g (relative)", slopeErr)
	}
	oldLR, oldErr := weightDecayToy(true)
	if oldErr < 1e-2 {
		t.Errorf("old order: ⟨g,g⟩ off the slope by only %.3g: the toy does not tell the orders apart", oldErr)
	}
	if oldLR == lr {
		t.Errorf("old order: final lr = %.3g, the same as the example's", oldLR)
	}
	t.Logf("final lr %.3g (example order), %.3g (old order); largest relative error of ⟨g,g⟩ as the slope: %.2g, %.2g",
		lr, oldLR, slopeErr, oldErr)
}

// weightDecayToy runs Example_weightDecay's loop, silently, in its order or
// (old) in the README's former one, and returns the final learning rate and
// the largest relative difference between the ⟨g,g⟩ given to Begin and the
// slope −d/dη f(x − η·g) at η = 0 of the loss given to Begin and Trial.
func weightDecayToy(old bool) (lr, slopeErr float64) {
	const n, b, wd = 1000, 10, 1e-2
	data := toyData(n)
	dim := len(data[0].a)
	cfg, _ := schedule.Defaults(schedule.PresetPaper, n, b, 0.1)
	s, _ := schedule.NewSALSA(cfg.SALSA())
	qc := direction.QHMConfig{Beta: 0.9, Nu: 1}
	if old {
		qc.WeightDecay = wd // Compute adds wd·x to g, after the line search
	}
	dir, _ := direction.NewQHM[float64](qc, dim)
	x, g, d, xt := make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, dim)
	along := func(eta float64, batch []example) float64 {
		for i := range xt {
			xt[i] = x[i] - eta*g[i]
		}
		return loss(xt, batch, wd)
	}
	for k := range 30 * n / b {
		batch := data[k*b%n : k*b%n+b]
		f := lossGrad(g, x, batch, wd)
		if old {
			lossGrad(g, x, batch, 0) // ∇ of the log-loss only
		}
		gg := direction.Dot(g, g)
		const eps = 1e-5
		slope := (along(-eps, batch) - along(eps, batch)) / (2 * eps)
		slopeErr = max(slopeErr, math.Abs(slope-gg)/gg)
		req, err := s.Begin(f, gg)
		for err == nil && req.Eval {
			req, err = s.Trial(along(req.Eta, batch))
		}
		if err != nil {
			panic(err)
		}
		if err := dir.Compute(d, g, x); err != nil {
			panic(err)
		}
		direction.Update(x, d, req.LR)
		res, err := s.End(schedule.Observation{X1D: direction.Dot(x, d), D2: direction.Dot(d, d)})
		if err != nil {
			panic(err)
		}
		if res.ResetMomentum {
			dir.Reset()
		}
	}
	return s.LR(), slopeErr
}
