package synthetic

import (
	"fmt"
	"math"

	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

// Result is the outcome of [Problem.Run].
type Result struct {
	Rows   []trace.Row      // one row per step, as in a *.trace.csv
	Events []schedule.Event // every event of every step, in order
	X      []float64        // the iterate after the last step
}

// Loss returns the mean mini-batch loss f_ξ(x) over the example indices rows,
// without the L2 term.
func (p *Problem) Loss(x []float64, rows []int) (float64, error) {
	if err := p.check(x, rows); err != nil {
		return 0, err
	}
	return p.model.eval(p, x, rows, nil), nil
}

// LossGrad returns f_ξ(x) over rows, without the L2 term, and overwrites grad
// with its gradient.
func (p *Problem) LossGrad(x []float64, rows []int, grad []float64) (float64, error) {
	if err := p.check(x, rows); err != nil {
		return 0, err
	}
	if len(grad) != len(p.Init) {
		return 0, fmt.Errorf("synthetic: %s: len(grad) = %d: must be %d", p.Name, len(grad), len(p.Init))
	}
	return p.model.eval(p, x, rows, grad), nil
}

// FullObjective returns the full-data loss at x plus the L2 term
// 0.5·wd·‖x‖² (the meta.json field final_full_objective).
func (p *Problem) FullObjective(x []float64, wd float64) (float64, error) {
	if len(x) != len(p.Init) {
		return 0, fmt.Errorf("synthetic: %s: len(x) = %d: must be %d", p.Name, len(x), len(p.Init))
	}
	if !(wd >= 0) || math.IsInf(wd, 0) {
		return 0, fmt.Errorf("synthetic: %s: wd = %v: must be in [0, +Inf)", p.Name, wd)
	}
	all := make([]int, p.N)
	for i := range all {
		all[i] = i
	}
	return p.model.eval(p, x, all, nil) + p.L2(x, wd), nil
}

// Dot returns ⟨a, b⟩ as statopt forms it: one dot product per parameter
// tensor, summed from 0.0 in parameter order.
func (p *Problem) Dot(a, b []float64) float64 {
	s := 0.0
	for _, t := range p.Tensors {
		s += direction.Dot(a[t.Offset:t.Offset+t.Len], b[t.Offset:t.Offset+t.Len])
	}
	return s
}

// L2 returns statopt's L2_regu_loss, 0.0 + Σ_tensors 0.5·wd·(x·x) in
// parameter order.
func (p *Problem) L2(x []float64, wd float64) float64 {
	s := 0.0
	for _, t := range p.Tensors {
		xt := x[t.Offset : t.Offset+t.Len]
		s += 0.5 * wd * direction.Dot(xt, xt)
	}
	return s
}

// check validates a parameter vector and a non-empty list of example indices.
func (p *Problem) check(x []float64, rows []int) error {
	if len(x) != len(p.Init) {
		return fmt.Errorf("synthetic: %s: len(x) = %d: must be %d", p.Name, len(x), len(p.Init))
	}
	if len(rows) == 0 {
		return fmt.Errorf("synthetic: %s: no example indices", p.Name)
	}
	for _, i := range rows {
		if i < 0 || i >= p.N {
			return fmt.Errorf("synthetic: %s: example index %d: must be in [0, %d)", p.Name, i, p.N)
		}
	}
	return nil
}

// Run trains the problem from [Problem.Init] for steps steps with direction
// dir and scheduler s, as statopt 0.2's SASA/SSLS/SALSA step does (see the
// conformance README, "The algorithm as implemented"). Step k:
//
//  1. f = f_ξk(x_k) + L2(x_k) and the raw gradient g on the batch of step k;
//  2. dir.Compute turns g into g + wd·x_k in place and writes d_k;
//  3. s.Begin(f, ⟨g,g⟩); each requested trial is answered with
//     f_ξk(x_k − η·g) + L2(x_k − η·g) on the same batch (statopt's
//     ls_dir='g');
//  4. x_{k+1} = x_k − α_k·d_k, then s.End with ⟨x_{k+1},d_k⟩ and ‖d_k‖²;
//     a drop resets dir's momentum.
//
// The row of step k holds Result.Step, the α_k of the update, f, the
// observation, and Result.Eta when Result.Searched. On an error the open
// step is aborted and the rows so far are returned with it.
//
// wd is the weight decay of the L2 term in the reported losses; it must be
// the one dir adds to g (checked when dir is a *[direction.QHM]). s and dir
// must be fresh: the row of step k is the k-th End's result.
func (p *Problem) Run(s schedule.Scheduler, dir direction.Direction[float64], wd float64, steps int) (*Result, error) {
	n := len(p.Init)
	switch {
	case s == nil || dir == nil:
		return nil, fmt.Errorf("synthetic: %s: Run needs a scheduler and a direction", p.Name)
	case dir.Len() != n:
		return nil, fmt.Errorf("synthetic: %s: direction length %d: must be %d", p.Name, dir.Len(), n)
	case !(wd >= 0) || math.IsInf(wd, 0):
		return nil, fmt.Errorf("synthetic: %s: wd = %v: must be in [0, +Inf)", p.Name, wd)
	case steps < 0 || steps > p.StepsPerEpoch()*len(p.Order):
		return nil, fmt.Errorf("synthetic: %s: steps = %d: must be in [0, %d]", p.Name, steps, p.StepsPerEpoch()*len(p.Order))
	}
	if q, ok := dir.(*direction.QHM[float64]); ok && q.Config().WeightDecay != wd {
		return nil, fmt.Errorf("synthetic: %s: wd = %v: must equal the direction's weight decay %v", p.Name, wd, q.Config().WeightDecay)
	}
	x := append([]float64(nil), p.Init...)
	g := make([]float64, n)
	d := make([]float64, n)
	xt := make([]float64, n)
	out := &Result{Rows: make([]trace.Row, 0, steps)}
	for k := 1; k <= steps; k++ {
		batch, err := p.Batch(k)
		if err != nil {
			return out, err
		}
		loss := p.model.eval(p, x, batch, g) + p.L2(x, wd)
		if err := dir.Compute(d, g, x); err != nil {
			return out, fmt.Errorf("synthetic: %s: step %d: %w", p.Name, k, err)
		}
		gd := 0.0
		if s.Searching() {
			gd = p.Dot(g, g)
		}
		req, err := s.Begin(loss, gd)
		if err != nil {
			return out, fmt.Errorf("synthetic: %s: step %d: %w", p.Name, k, err)
		}
		for req.Eval {
			copy(xt, x)
			direction.Update(xt, g, req.Eta) // statopt: p.data.add_(−η, g)
			f1 := p.model.eval(p, xt, batch, nil) + p.L2(xt, wd)
			if req, err = s.Trial(f1); err != nil {
				s.Abort()
				return out, fmt.Errorf("synthetic: %s: step %d: %w", p.Name, k, err)
			}
		}
		direction.Update(x, d, req.LR)
		obs := schedule.Observation{X1D: p.Dot(x, d), D2: p.Dot(d, d)}
		if schedule.AsksNorm(s) {
			obs.X2 = p.Dot(x, x)
		}
		res, err := s.End(obs)
		if err != nil {
			s.Abort()
			return out, fmt.Errorf("synthetic: %s: step %d: %w", p.Name, k, err)
		}
		if res.ResetMomentum {
			dir.Reset()
		}
		out.Rows = append(out.Rows, trace.Row{Step: res.Step, LR: req.LR, Loss: loss,
			X1D: obs.X1D, D2: obs.D2, Eta: res.Eta, HasEta: res.Searched})
		out.Events = append(out.Events, res.Events...)
	}
	out.X = x
	return out, nil
}
