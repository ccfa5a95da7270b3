package salsagomlx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/schedule"
)

// constSched is a minimal schedule.Scheduler for the tests: a constant
// learning rate, optionally with a line search that tries η = 2α then α and
// falls back to α/2 (statopt's ls_inc=2, ls_dec=0.5, ls_max=2, c = sdc), and
// a momentum reset at step resetAt.
type constSched struct {
	lr      float64
	search  bool
	sdc     float64
	resetAt int

	step   int
	phase  int // 0 between steps, 1 in the line search, 2 waiting for End
	f0, gd float64
	eta    float64
	cnt    int
	trials []float64 // every η asked for, in order
}

func (s *constSched) Name() string    { return "const" }
func (s *constSched) LR() float64     { return s.lr }
func (s *constSched) Step() int       { return s.step }
func (s *constSched) Searching() bool { return s.search }

func (s *constSched) Begin(loss, gd float64) (schedule.Request, error) {
	if s.phase != 0 {
		return schedule.Request{}, schedule.ErrPhase
	}
	if !s.search {
		s.phase = 2
		return schedule.Request{LR: s.lr}, nil
	}
	s.f0, s.gd, s.eta, s.cnt, s.phase = loss, gd, 2*s.lr, 0, 1
	s.trials = append(s.trials, s.eta)
	return schedule.Request{Eval: true, Eta: s.eta}, nil
}

func (s *constSched) Trial(f float64) (schedule.Request, error) {
	if s.phase != 1 {
		return schedule.Request{}, schedule.ErrPhase
	}
	if f > s.f0-s.sdc*s.eta*s.gd {
		s.eta *= 0.5
		s.cnt++
		if s.cnt < 2 {
			s.trials = append(s.trials, s.eta)
			return schedule.Request{Eval: true, Eta: s.eta}, nil
		}
	}
	s.phase = 2
	return schedule.Request{LR: s.lr}, nil // constant: the search only exercises the protocol
}

func (s *constSched) End(obs schedule.Observation) (schedule.Result, error) {
	if s.phase != 2 {
		return schedule.Result{}, schedule.ErrPhase
	}
	s.phase = 0
	s.step++
	return schedule.Result{Step: s.step, LR: s.lr, NextLR: s.lr, ResetMomentum: s.step == s.resetAt}, nil
}

func (s *constSched) MarshalBinary() ([]byte, error) { return nil, nil }
func (s *constSched) UnmarshalBinary([]byte) error   { return nil }

// normalWeights draws n weights from N(0, scale²) with r: the initial
// weights of a fixedLinear model.
func normalWeights(r *rand.Rand, n int, scale float64) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(scale * r.NormFloat64())
	}
	return w
}

// fixedLinear is softmax regression whose weights start from w0 (flat,
// row-major [in, out]) and zero bias.
func fixedLinear(w0 []float32, in, out int) Model {
	return func(scope *model.Scope, x *Node) *Node {
		w := scope.WithInitializer(func(g *Graph, _ shapes.Shape) *Node {
			return Const(g, tensors.FromFlatDataAndDimensions(w0, in, out))
		}).VariableWithShape("weights", shapes.Make(x.DType(), in, out))
		b := scope.WithInitializer(Zeros).VariableWithShape("bias", shapes.Make(x.DType(), out))
		g := x.Graph()
		return Add(MatMul(x, w.NodeValue(g)), InsertAxes(b.NodeValue(g), 0))
	}
}

// hostLinear is a float64 reference of softmax regression with the QHM
// direction, written independently of the graph code.
type hostLinear struct {
	in, out  int
	w, b     []float64 // x
	hw, hb   []float64 // momentum
	beta, nu float64
	wd       float64
	decayAll bool // the bias decays too (Config.DecayAll)
}

// lossGrad returns f + 0.5·wd·‖x‖² and g = ∇f + wd·x at (w, b), where x
// is w, and b too with decayAll.
func (h *hostLinear) lossGrad(w, b []float64, X []float32, y []int32) (float64, []float64, []float64) {
	n := len(y)
	gw := make([]float64, len(w))
	gb := make([]float64, len(b))
	loss := 0.0
	z := make([]float64, h.out)
	for i := 0; i < n; i++ {
		mx := math.Inf(-1)
		for j := 0; j < h.out; j++ {
			z[j] = b[j]
			for k := 0; k < h.in; k++ {
				z[j] += float64(X[i*h.in+k]) * w[k*h.out+j]
			}
			mx = math.Max(mx, z[j])
		}
		se := 0.0
		for j := range z {
			se += math.Exp(z[j] - mx)
		}
		lse := mx + math.Log(se)
		loss += lse - z[y[i]]
		for j := 0; j < h.out; j++ {
			p := math.Exp(z[j] - lse)
			if int32(j) == y[i] {
				p--
			}
			p /= float64(n)
			gb[j] += p
			for k := 0; k < h.in; k++ {
				gw[k*h.out+j] += float64(X[i*h.in+k]) * p
			}
		}
	}
	loss /= float64(n)
	l2 := 0.0
	for i := range w {
		l2 += w[i] * w[i]
		gw[i] += h.wd * w[i]
	}
	for i := range b {
		if h.decayAll {
			l2 += b[i] * b[i]
			gb[i] += h.wd * b[i]
		}
	}
	return loss + 0.5*h.wd*l2, gw, gb
}

func (h *hostLinear) qhm(x, hm, g []float64, lr float64) (x1d, d2 float64) {
	for i := range x {
		d := g[i]
		if h.beta != 0 && h.nu != 0 {
			hm[i] = h.beta*hm[i] + (1-h.beta)*g[i]
			d = (1-h.nu)*g[i] + h.nu*hm[i]
		}
		x[i] -= lr * d
		x1d += x[i] * d
		d2 += d * d
	}
	return x1d, d2
}

func randBatch(r *rand.Rand, n, in, out int) ([]float32, []int32) {
	X := make([]float32, n*in)
	for i := range X {
		X[i] = float32(r.NormFloat64())
	}
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(r.IntN(out))
	}
	return X, y
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestRunMatchesHost drives the trainer through the scheduler protocol, both
// with and without the line search and with a momentum reset, and compares
// every loss, ‖g‖², trial loss, ⟨x⁺,d⟩ and ‖d‖² with the float64 reference,
// and ‖x⁺‖² where the scheduler asks for it (schedule.NormAsker; 0 where
// it does not).
func TestRunMatchesHost(t *testing.T) {
	const in, out, n = 7, 3, 16
	for _, c := range []struct{ search, decayAll bool }{{false, true}, {true, true}, {false, false}, {true, false}} {
		search := c.search
		r := rand.New(rand.NewPCG(1, 2))
		w0 := normalWeights(r, in*out, 0.3)
		cfg := Config{LR: 0.2, Beta: 0.9, Nu: 0.7, WeightDecay: 0.01, DecayAll: c.decayAll}
		tr, err := New(gobackend.GetBackend(), model.NewStore(), fixedLinear(w0, in, out), cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := &hostLinear{in: in, out: out, w: make([]float64, in*out), b: make([]float64, out),
			hw: make([]float64, in*out), hb: make([]float64, out), beta: cfg.Beta, nu: cfg.Nu, wd: cfg.WeightDecay, decayAll: c.decayAll}
		for i, v := range w0 {
			h.w[i] = float64(v)
		}
		s := &constSched{lr: cfg.LR, search: search, sdc: 0.1, resetAt: 3}
		rec := &recorder{Scheduler: s, norm: !c.decayAll}
		for step := 1; step <= 5; step++ {
			X, y := randBatch(r, n, in, out)
			xt, yt := tensors.FromFlatDataAndDimensions(X, n, in), tensors.FromFlatDataAndDimensions(y, n)
			res, st, err := tr.Run(rec, xt, yt)
			if err != nil {
				t.Fatalf("search=%v step %d: %v", search, step, err)
			}
			if st.Loss != rec.loss || st.X1D != rec.obs.X1D || st.D2 != rec.obs.D2 || (search && st.GG != rec.gd) {
				t.Errorf("search=%v step %d: Stats %+v differ from what the scheduler saw (loss %v gd %v obs %+v)",
					search, step, st, rec.loss, rec.gd, rec.obs)
			}
			// Reference.
			loss, gw, gb := h.lossGrad(h.w, h.b, X, y)
			gg := 0.0
			for _, v := range append(append([]float64{}, gw...), gb...) {
				gg += v * v
			}
			if !near(rec.loss, loss, 1e-5) {
				t.Errorf("search=%v step %d: loss %v, want %v", search, step, rec.loss, loss)
			}
			if search {
				if !near(rec.gd, gg, 1e-4) {
					t.Errorf("step %d: gd %v, want %v", step, rec.gd, gg)
				}
				for i, eta := range rec.etas {
					tw, tb := make([]float64, len(h.w)), make([]float64, len(h.b))
					for k := range tw {
						tw[k] = h.w[k] - eta*gw[k]
					}
					for k := range tb {
						tb[k] = h.b[k] - eta*gb[k]
					}
					want, _, _ := h.lossGrad(tw, tb, X, y)
					if !near(rec.fs[i], want, 1e-5) {
						t.Errorf("step %d trial η=%v: f %v, want %v", step, eta, rec.fs[i], want)
					}
				}
				if len(rec.etas) == 0 {
					t.Errorf("step %d: no trial evaluated", step)
				}
			}
			x1d, d2 := h.qhm(h.w, h.hw, gw, cfg.LR)
			b1d, bd2 := h.qhm(h.b, h.hb, gb, cfg.LR)
			if !near(rec.obs.X1D, x1d+b1d, 1e-4) || !near(rec.obs.D2, d2+bd2, 1e-4) {
				t.Errorf("search=%v step %d: obs %+v, want x1d %v d2 %v", search, step, rec.obs, x1d+b1d, d2+bd2)
			}
			x2 := 0.0
			if rec.norm {
				for _, v := range append(append([]float64{}, h.w...), h.b...) {
					x2 += v * v
				}
			}
			if !near(rec.obs.X2, x2, 1e-5) || (x2 > 0) != rec.norm {
				t.Errorf("search=%v step %d: X2 %v, want %v (asked: %v)", search, step, rec.obs.X2, x2, rec.norm)
			}
			if res.ResetMomentum {
				clear(h.hw)
				clear(h.hb)
			}
		}
	}
}

// recorder wraps a Scheduler and keeps what the trainer reported in a step.
type recorder struct {
	schedule.Scheduler
	norm     bool // AsksNorm: the trainer reports ‖x_{k+1}‖²
	loss, gd float64
	etas     []float64
	fs       []float64
	obs      schedule.Observation
}

func (r *recorder) Begin(loss, gd float64) (schedule.Request, error) {
	r.loss, r.gd, r.etas, r.fs = loss, gd, nil, nil
	req, err := r.Scheduler.Begin(loss, gd)
	if req.Eval {
		r.etas = append(r.etas, req.Eta)
	}
	return req, err
}

func (r *recorder) Trial(f float64) (schedule.Request, error) {
	r.fs = append(r.fs, f)
	req, err := r.Scheduler.Trial(f)
	if req.Eval {
		r.etas = append(r.etas, req.Eta)
	}
	return req, err
}

// AsksNorm makes the recorder a schedule.NormAsker when norm is set.
func (r *recorder) AsksNorm() bool { return r.norm }

func (r *recorder) End(obs schedule.Observation) (schedule.Result, error) {
	r.obs = obs
	return r.Scheduler.End(obs)
}

func (s *constSched) Abort() {
	if s.phase != 0 {
		s.phase = 0
	}
}
