package synthetic

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/internal/conformance"

	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

// replay is a test scheduler that takes its decisions from a recorded run:
// the learning rate of a step without a line search is the trace's lr, and
// momentum is reset after the steps of meta.json's drops. Steps whose trace
// row has an eta run statopt's SSLS line search (conformance README, "SSLS
// line search") with the config's γ, ls_sdc, ls_inc, ls_dec and ls_max, so
// that the driver's trial evaluations decide the learning rate.
type replay struct {
	ref                  []trace.Row
	drops                map[int]bool
	gamma, sdc, inc, dec float64
	lsMax                int
	k                    int     // completed steps
	lrPrev               float64 // the learning rate of step k
	f0, gd, eta, lr      float64 // the current step
	cnt                  int
	usedEta              []float64 // η smoothed into lr, per step; NaN without a search
	phase                int       // 0 between steps, 1 searching, 2 waiting for End
}

var _ schedule.Scheduler = (*replay)(nil)

func newReplay(t testing.TB, m *meta, ref []trace.Row) *replay {
	r := &replay{ref: ref, drops: map[int]bool{}, lrPrev: m.num(t, "lr")}
	for _, d := range m.Drops {
		r.drops[int(d[0])] = true
	}
	if m.Config["opt"] == "SALSA" {
		r.gamma, r.sdc = m.num(t, "gamma"), m.num(t, "ls_sdc")
		r.inc, r.dec, r.lsMax = m.num(t, "ls_inc"), m.num(t, "ls_dec"), int(m.num(t, "ls_max"))
	}
	return r
}

func (r *replay) Name() string    { return "replay" }
func (r *replay) LR() float64     { return r.lrPrev }
func (r *replay) Step() int       { return r.k }
func (r *replay) Searching() bool { return r.k < len(r.ref) && r.ref[r.k].HasEta }

func (r *replay) Begin(loss, gd float64) (schedule.Request, error) {
	if r.phase != 0 || r.k >= len(r.ref) {
		return schedule.Request{}, schedule.ErrPhase
	}
	if !r.Searching() {
		r.lr, r.phase = r.ref[r.k].LR, 2
		return schedule.Request{LR: r.lr}, nil
	}
	r.f0, r.gd, r.cnt, r.phase = loss, gd, 0, 1
	r.eta = r.lrPrev * r.inc
	if gd > 0 && r.lsMax > 0 {
		return schedule.Request{Eval: true, Eta: r.eta}, nil
	}
	if gd <= 0 {
		r.eta = r.lrPrev * r.dec
	}
	return r.smooth(), nil
}

func (r *replay) Trial(f1 float64) (schedule.Request, error) {
	if r.phase != 1 {
		return schedule.Request{}, schedule.ErrPhase
	}
	// Python: f1 > f0 - ls_sdc * eta * g_dot_d, without FMA.
	if f1 > r.f0-float64(float64(r.sdc*r.eta)*r.gd) {
		r.eta *= r.dec
		r.cnt++
		if r.cnt < r.lsMax {
			return schedule.Request{Eval: true, Eta: r.eta}, nil
		}
	}
	return r.smooth(), nil
}

// smooth ends the search: lr = (1−γ)·lr_prev + γ·η.
func (r *replay) smooth() schedule.Request {
	r.lr = float64((1-r.gamma)*r.lrPrev) + float64(r.gamma*r.eta)
	r.phase = 2
	return schedule.Request{LR: r.lr}
}

func (r *replay) End(obs schedule.Observation) (schedule.Result, error) {
	if r.phase != 2 {
		return schedule.Result{}, schedule.ErrPhase
	}
	r.k++
	r.phase = 0
	res := schedule.Result{Step: r.k, LR: r.lr, ResetMomentum: r.drops[r.k]}
	if r.ref[r.k-1].HasEta {
		res.Searched, res.Eta = true, r.eta
	}
	r.lrPrev = r.lr
	if r.k < len(r.ref) {
		res.NextLR = r.ref[r.k].LR
	}
	return res, nil
}

func (r *replay) Abort() {
	if r.phase != 0 {
		r.phase = 0
	}
}

func (r *replay) MarshalBinary() ([]byte, error) { return nil, errNoSnapshot }
func (r *replay) UnmarshalBinary([]byte) error   { return errNoSnapshot }

// relErr is |a−b|/|b| (0 if both are 0).
func relErr(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Abs(b)
}

// runStats are the worst deviations of a run from its reference trace.
type runStats struct {
	loss, d2, x1d float64 // max relative errors
	x1dScaled     float64 // max |Δx1d| / max|x1d| over the run
	obj           float64 // relative error of the final full objective
	searches      int     // steps with a line search
}

// replayRun runs run for steps steps (all if 0) with the replay scheduler.
func replayRun(t *testing.T, run string, steps int) runStats {
	t.Helper()
	m := readMeta(t, run)
	ref, err := trace.ReadTraceFile(filepath.Join(conformance.PublicDir(t), run+".trace.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ref) != m.Steps {
		t.Fatalf("%s: %d trace rows: meta says %d steps", run, len(ref), m.Steps)
	}
	if steps == 0 {
		steps = len(ref)
	}
	p := loadProblem(t, m.Problem)
	wd := m.num(t, "weight_decay")
	dir, err := direction.NewQHM[float64](direction.QHMConfig{
		Beta: m.num(t, "momentum"), Nu: m.num(t, "qhm_nu"), WeightDecay: wd}, len(p.Init))
	if err != nil {
		t.Fatal(err)
	}
	s := newReplay(t, m, ref)
	res, err := p.Run(s, dir, wd, steps)
	if err != nil {
		t.Fatal(err)
	}
	var st runStats
	var x1dMax, x1dAbs float64
	for i, row := range res.Rows {
		w := ref[i]
		if row.Step != w.Step || row.HasEta != w.HasEta {
			t.Fatalf("%s: row %d: step %d hasEta %v: trace has %d %v", run, i, row.Step, row.HasEta, w.Step, w.HasEta)
		}
		if row.HasEta {
			st.searches++
			// The search replays statopt's arithmetic: lr and η are exact.
			if row.LR != w.LR || row.Eta != w.Eta {
				t.Fatalf("%s: step %d: lr %v η %v: trace has lr %v η %v", run, w.Step, row.LR, row.Eta, w.LR, w.Eta)
			}
		}
		st.loss = max(st.loss, relErr(row.Loss, w.Loss))
		st.d2 = max(st.d2, relErr(row.D2, w.D2))
		st.x1d = max(st.x1d, relErr(row.X1D, w.X1D))
		x1dMax = max(x1dMax, math.Abs(w.X1D))
		x1dAbs = max(x1dAbs, math.Abs(row.X1D-w.X1D))
	}
	st.x1dScaled = x1dAbs / x1dMax
	if steps == len(ref) {
		obj, err := p.FullObjective(res.X, wd)
		if err != nil {
			t.Fatal(err)
		}
		st.obj = relErr(obj, m.FinalFullObjective)
	}
	return st
}

// chaotic lists the runs whose SSLS phase (lr ≈ 4…30) amplifies rounding
// differences about tenfold every 50–65 steps: statopt's PyTorch kernels
// (BLAS, vectorized exp/log/tanh, FMA) and this package's loops differ in the
// last bit, so the trajectories agree to 1e-9 only for the first ~400–500
// steps (measured: relative error of loss or ‖d‖² first above 1e-9 at steps
// 494, 495 and 396) and are unrelated by step ~900. TestReplay compares them
// over the first chaoticHorizon steps.
var chaotic = map[string]bool{
	"logreg_salsa_lr1e-1":     true,
	"mlp_salsa_lr1e-3":        true,
	"mlp_salsa_lr1e-3_wd1e-4": true,
}

const chaoticHorizon = 300

// TestReplay runs every public synthetic run end to end with the driver,
// the replay scheduler and direction.QHM, and compares loss, ‖d‖² and
// ⟨x⁺,d⟩ row by row with the recorded trace (statopt 0.2 under PyTorch
// 1.13), and the final full objective with meta.json.
func TestReplay(t *testing.T) {
	runs, err := filepath.Glob(filepath.Join(conformance.PublicDir(t), "*.meta.json"))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no meta.json files: %v", err)
	}
	for i, r := range runs {
		runs[i] = strings.TrimSuffix(filepath.Base(r), ".meta.json")
	}
	if testing.Short() {
		runs = []string{"lsq_salsa_lr1e-3", "logreg_sasa_mb", "mlp_salsa_lr1e-3"}
	}
	for _, run := range runs {
		t.Run(run, func(t *testing.T) {
			steps := 0
			if chaotic[run] {
				steps = chaoticHorizon
			}
			st := replayRun(t, run, steps)
			t.Logf("max rel err: loss %.2g d2 %.2g x1d %.2g (x1d abs/max|x1d| %.2g); final objective %.2g; %d searches",
				st.loss, st.d2, st.x1d, st.x1dScaled, st.obj, st.searches)
			check := func(what string, v, tol float64) {
				if !(v <= tol) {
					t.Errorf("%s: max relative error %.3g > %g", what, v, tol)
				}
			}
			check("loss", st.loss, 1e-9)
			check("d2", st.d2, 1e-9)
			check("x1d (scaled by max|x1d|)", st.x1dScaled, 1e-9)
			check("final full objective", st.obj, 1e-9)
		})
	}
}

// TestConstantPrefix runs SASA+ runs only up to their first drop, where the
// replay scheduler is a constant learning rate (the brief's check that needs
// nothing from the trace but lr0).
func TestConstantPrefix(t *testing.T) {
	for _, run := range []string{"lsq_sasa_mb", "logreg_sasa_mb", "mlp_sasa_mb", "lsq_sasa_qhm07", "logreg_sasa_sgd", "mlp_sasa_sgd"} {
		m := readMeta(t, run)
		first := int(m.Drops[0][0])
		st := replayRun(t, run, first)
		t.Logf("%s, %d steps at lr %v: max rel err loss %.2g d2 %.2g x1d %.2g", run, first, m.num(t, "lr"), st.loss, st.d2, st.x1d)
		if st.loss > 1e-9 || st.d2 > 1e-9 {
			t.Errorf("%s: loss %.3g, d2 %.3g: want ≤ 1e-9", run, st.loss, st.d2)
		}
	}
}

func TestRunErrors(t *testing.T) {
	p := loadProblem(t, "lsq")
	dir, _ := direction.NewQHM[float64](direction.QHMConfig{Beta: 0.9, Nu: 1}, len(p.Init))
	s := &replay{ref: make([]trace.Row, 10)}
	for _, c := range []struct {
		wd    float64
		steps int
	}{{0.1, 1}, {math.NaN(), 1}, {0, -1}, {0, 200*100 + 1}} {
		if _, err := p.Run(s, dir, c.wd, c.steps); err == nil {
			t.Errorf("Run(wd=%v, steps=%d): no error", c.wd, c.steps)
		}
	}
	short, _ := direction.NewQHM[float64](direction.QHMConfig{}, 3)
	if _, err := p.Run(s, short, 0, 1); err == nil {
		t.Error("Run with a direction of the wrong length: no error")
	}
}

func TestLossErrors(t *testing.T) {
	p := loadProblem(t, "logreg")
	g := make([]float64, len(p.Init))
	for _, c := range []struct {
		x, g []float64
		rows []int
	}{
		{p.Init[:3], g, []int{0}},
		{p.Init, g, nil},
		{p.Init, g, []int{-1}},
		{p.Init, g, []int{p.N}},
		{p.Init, g[:1], []int{0}},
	} {
		if _, err := p.LossGrad(c.x, c.rows, c.g); err == nil {
			t.Errorf("LossGrad(len(x)=%d, rows=%v, len(g)=%d): no error", len(c.x), c.rows, len(c.g))
		}
	}
	if _, err := p.FullObjective(p.Init, -1); err == nil {
		t.Error("FullObjective(wd=-1): no error")
	}
}

// BenchmarkRunMLP measures a full 20000-step mlp run (mlp_sasa_mb_wd1e-4_lr0.2,
// which never drops) through the driver.
func BenchmarkRunMLP(b *testing.B) {
	run := "mlp_sasa_mb_wd1e-4_lr0.2"
	m := readMeta(b, run)
	p := loadProblem(b, m.Problem)
	ref := make([]trace.Row, m.Steps)
	for i := range ref {
		ref[i].LR = m.num(b, "lr")
	}
	wd := m.num(b, "weight_decay")
	for b.Loop() {
		dir, err := direction.NewQHM[float64](direction.QHMConfig{Beta: 0.9, Nu: 1, WeightDecay: wd}, len(p.Init))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Run(newReplay(b, m, ref), dir, wd, m.Steps); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad measures reading the three problems.
func BenchmarkLoad(b *testing.B) {
	dir := filepath.Join(conformance.PublicDir(b), "problems")
	for b.Loop() {
		for _, name := range Names() {
			if _, err := Load(dir, name); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func ExampleProblem_Dot() {
	p := &Problem{Tensors: []Tensor{{Name: "weight", Offset: 0, Len: 2}, {Name: "bias", Offset: 2, Len: 1}}}
	fmt.Println(p.Dot([]float64{1, 2, 3}, []float64{4, 5, 6}))
	// Output: 32
}
