package salsagomlx

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/gomlx/models"
	"github.com/salsaopt/salsa/schedule"
)

func tensorsOf(X []float32, y []int32, in int) (*tensors.Tensor, *tensors.Tensor) {
	return tensors.FromFlatDataAndDimensions(X, len(y), in), tensors.FromFlatDataAndDimensions(y, len(y))
}

// realSched returns a scheduler of package schedule with the paper's
// defaults for n examples in batches of b.
func realSched(t *testing.T, method string, n, b int, lr0 float64) schedule.Scheduler {
	t.Helper()
	cfg, err := schedule.Defaults(schedule.PresetPaper, n, b, lr0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schedule.New(method, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunNaNLoss: a batch with a NaN feature makes the loss NaN; the
// scheduler rejects it at Begin, Run returns the error with Stats.Loss NaN,
// the scheduler is left between steps, and the step wrote no variable: the
// trainer's snapshot (parameters, momentum or Adam's moments, batch-norm
// statistics, the RNG) is the one before it, for the fused step (sasa+) and
// the searching one (ssls), and the next step runs from finite x.
func TestRunNaNLoss(t *testing.T) {
	const in, out, n = 5, 3, 8
	bnNet := bnNet(out, 0.3)
	nets := map[string]func(*model.Scope, *Node) *Node{"logreg": models.Logreg(out), "batchnorm": bnNet}
	for _, net := range []string{"logreg", "batchnorm"} {
		for _, dir := range []Direction{QHM, Adam} {
			for _, method := range []string{"sasa+", "ssls"} {
				name := fmt.Sprintf("%s/%v/%s", net, dir, method)
				cfg := Config{LR: 0.1, Beta: 0.9, Nu: 1, WeightDecay: 1e-3, Direction: dir}
				if dir == Adam {
					cfg = Config{LR: 0.01, Direction: Adam, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
				}
				tr, err := New(gobackend.GetBackend(), model.NewStore(), nets[net], cfg)
				if err != nil {
					t.Fatal(err)
				}
				s := realSched(t, method, 64, n, 0.1)
				r := rand.New(rand.NewPCG(5, 6))
				X, y := randBatch(r, n, in, out)
				good, gy := tensorsOf(X, y, in)
				if _, _, err := tr.Run(s, good, gy); err != nil {
					t.Fatalf("%s: good step: %v", name, err)
				}
				before, err := tr.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				bad := append([]float32(nil), X...)
				bad[3] = float32(math.NaN())
				bx, by := tensorsOf(bad, y, in)
				_, st, err := tr.Run(s, bx, by)
				if err == nil {
					t.Fatalf("%s: NaN batch: no error", name)
				}
				if !math.IsNaN(st.Loss) {
					t.Errorf("%s: NaN batch: Stats.Loss = %v, want NaN (err %v)", name, st.Loss, err)
				}
				if s.Step() != 1 {
					t.Errorf("%s: scheduler at step %d after the rejected batch, want 1", name, s.Step())
				}
				after, err := tr.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(before, after) {
					t.Errorf("%s: the rejected step changed the trainer's state", name)
				}
				if _, st, err := tr.Run(s, good, gy); err != nil || math.IsNaN(st.Loss) {
					t.Errorf("%s: step after the NaN batch: loss %v, err %v", name, st.Loss, err)
				}
			}
		}
	}
}

// TestEvaluate compares the loss (no L2) and accuracy with the float64
// reference, checks that x is unchanged and that chunk sums add up.
func TestEvaluate(t *testing.T) {
	const in, out, n = 7, 3, 40
	r := rand.New(rand.NewPCG(7, 8))
	w0 := normalWeights(r, in*out, 0.5)
	tr, err := New(gobackend.GetBackend(), model.NewStore(), fixedLinear(w0, in, out), Config{LR: 0.1, Beta: 0.9, Nu: 1, WeightDecay: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	X, y := randBatch(r, n, in, out)
	xt, yt := tensorsOf(X, y, in)
	loss, acc, err := tr.Evaluate(xt, yt)
	if err != nil {
		t.Fatal(err)
	}
	h := &hostLinear{in: in, out: out, w: make([]float64, in*out), b: make([]float64, out)}
	for i, v := range w0 {
		h.w[i] = float64(v)
	}
	want, _, _ := h.lossGrad(h.w, h.b, X, y) // wd = 0: no L2 term
	correct := 0
	for i := 0; i < n; i++ {
		best, arg := math.Inf(-1), -1
		for j := 0; j < out; j++ {
			z := 0.0
			for k := 0; k < in; k++ {
				z += float64(X[i*in+k]) * h.w[k*out+j]
			}
			if z > best {
				best, arg = z, j
			}
		}
		if int32(arg) == y[i] {
			correct++
		}
	}
	if !near(loss, want, 1e-5) || acc != float64(correct)/n {
		t.Errorf("Evaluate = (%v, %v), want (%v, %v)", loss, acc, want, float64(correct)/n)
	}
	// Chunks of 15, 15, 10: the sums give the same means.
	var ls float64
	var cs, ns int
	for lo := 0; lo < n; lo += 15 {
		hi := min(lo+15, n)
		cx, cy := tensorsOf(X[lo*in:hi*in], y[lo:hi], in)
		l, c, m, err := tr.EvaluateSums(cx, cy)
		if err != nil {
			t.Fatal(err)
		}
		ls, cs, ns = ls+l, cs+c, ns+m
	}
	if ns != n || !near(ls/n, want, 1e-5) || cs != correct {
		t.Errorf("chunked: n %d loss %v correct %d, want %d %v %d", ns, ls/n, cs, n, want, correct)
	}
	// x unchanged: a training step still starts from w0.
	st, err := tr.StepStats(xt, yt)
	if err != nil {
		t.Fatal(err)
	}
	l2 := 0.0
	for _, v := range h.w {
		l2 += v * v
	}
	if !near(st.Loss, want+0.25*l2, 1e-5) {
		t.Errorf("loss after Evaluate %v, want %v", st.Loss, want+0.25*l2)
	}
	// After the step Evaluate sees the new x.
	if l, _, _ := tr.Evaluate(xt, yt); l == loss {
		t.Errorf("Evaluate after a step returned the old loss %v", l)
	}
}

// TestAdamMatchesHost compares the Adam direction with a float64 reference
// of PyTorch's Adam with weight_decay (L2 added to g).
func TestAdamMatchesHost(t *testing.T) {
	const in, out, n = 6, 3, 16
	r := rand.New(rand.NewPCG(9, 10))
	w0 := normalWeights(r, in*out, 0.3)
	cfg := Config{LR: 0.01, Direction: Adam, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, DecayAll: true}
	tr, err := New(gobackend.GetBackend(), model.NewStore(), fixedLinear(w0, in, out), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &hostLinear{in: in, out: out, w: make([]float64, in*out), b: make([]float64, out), wd: cfg.WeightDecay, decayAll: true}
	for i, v := range w0 {
		h.w[i] = float64(v)
	}
	x := append(h.w, h.b...) // one flat parameter vector for the reference
	m, v := make([]float64, len(x)), make([]float64, len(x))
	for step := 1; step <= 6; step++ {
		if step == 4 {
			if err := tr.ResetMomentum(); err != nil {
				t.Fatal(err)
			}
			clear(m)
			clear(v)
		}
		k := (step-1)%3 + 1 // Adam's t restarts after the reset
		X, y := randBatch(r, n, in, out)
		xt, yt := tensorsOf(X, y, in)
		st, err := tr.StepStats(xt, yt)
		if err != nil {
			t.Fatal(err)
		}
		loss, gw, gb := h.lossGrad(x[:in*out], x[in*out:], X, y)
		g := append(gw, gb...)
		bc1, bc2 := 1-math.Pow(cfg.Beta1, float64(k)), 1-math.Pow(cfg.Beta2, float64(k))
		var x1d, d2 float64
		for i := range x {
			m[i] = cfg.Beta1*m[i] + (1-cfg.Beta1)*g[i]
			v[i] = cfg.Beta2*v[i] + (1-cfg.Beta2)*g[i]*g[i]
			d := (m[i] / bc1) / (math.Sqrt(v[i])/math.Sqrt(bc2) + cfg.Eps)
			x[i] -= cfg.LR * d
			x1d += x[i] * d
			d2 += d * d
		}
		if !near(st.Loss, loss, 1e-5) || !near(st.X1D, x1d, 1e-4) || !near(st.D2, d2, 1e-4) {
			t.Errorf("step %d: got loss %v x1d %v d2 %v, want %v %v %v", step, st.Loss, st.X1D, st.D2, loss, x1d, d2)
		}
	}
}

// TestModels: Logreg starts at zero (loss log C); MLP's initial weights are
// a function of the store's RNG seed.
func TestModels(t *testing.T) {
	const in, out, n = 12, 4, 10
	r := rand.New(rand.NewPCG(11, 12))
	X, y := randBatch(r, n, in, out)
	xt, yt := tensorsOf(X, y, in)
	tr, err := New(gobackend.GetBackend(), model.NewStore(), models.Logreg(out), Config{LR: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if loss, _, err := tr.Evaluate(xt, yt); err != nil || !near(loss, math.Log(out), 1e-6) {
		t.Errorf("logreg at zero: loss %v (err %v), want log %d = %v", loss, err, out, math.Log(out))
	}
	snap := func(seed int64) []byte {
		store := model.NewStore()
		if err := store.SetRNGStateFromSeed(seed); err != nil {
			t.Fatal(err)
		}
		tr, err := New(gobackend.GetBackend(), store, models.MLP([]int{8, 8}, out), Config{LR: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := tr.Evaluate(xt, yt); err != nil {
			t.Fatal(err)
		}
		b, err := tr.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := snap(3), snap(3), snap(4)
	if !bytes.Equal(a, b) {
		t.Error("MLP: two stores seeded alike start from different weights")
	}
	if bytes.Equal(a, c) {
		t.Error("MLP: seeds 3 and 4 give the same weights")
	}
}

// TestSnapshotResume runs k steps, snapshots, restores into a fresh trainer
// and checks that both continue bit for bit alike, for QHM (fused and line-
// search paths, with a momentum reset after the snapshot) and Adam.
func TestSnapshotResume(t *testing.T) {
	const in, out, n = 10, 3, 16
	cases := []struct {
		name   string
		cfg    Config
		search bool
	}{
		{"qhm", Config{LR: 0.05, Beta: 0.9, Nu: 0.7, WeightDecay: 1e-3}, false},
		{"qhm-search", Config{LR: 0.05, Beta: 0.9, Nu: 1, WeightDecay: 1e-3}, true},
		{"adam", Config{LR: 0.01, Direction: Adam, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-3}, false},
	}
	for _, c := range cases {
		build := func() *Trainer {
			store := model.NewStore()
			if err := store.SetRNGStateFromSeed(1); err != nil {
				t.Fatal(err)
			}
			tr, err := New(gobackend.GetBackend(), store, models.MLP([]int{16}, out), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}
		r := rand.New(rand.NewPCG(13, 14))
		batches := make([][2]*tensors.Tensor, 12)
		for i := range batches {
			X, y := randBatch(r, n, in, out)
			batches[i][0], batches[i][1] = tensorsOf(X, y, in)
		}
		a := build()
		sa := &constSched{lr: c.cfg.LR, search: c.search, sdc: 0.1, resetAt: 8}
		for _, b := range batches[:5] {
			if _, _, err := a.Run(sa, b[0], b[1]); err != nil {
				t.Fatal(err)
			}
		}
		snap, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		bt := build()
		if err := bt.UnmarshalBinary(snap); err != nil {
			t.Fatalf("%s: restore: %v", c.name, err)
		}
		sb := *sa
		sb.trials = nil
		for i, b := range batches[5:] {
			_, sta, err1 := a.Run(sa, b[0], b[1])
			_, stb, err2 := bt.Run(&sb, b[0], b[1])
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if math.Float64bits(sta.Loss) != math.Float64bits(stb.Loss) || sta != stb {
				t.Errorf("%s: step %d after the restore: %+v vs %+v", c.name, 6+i, sta, stb)
			}
		}
		ea, _ := a.MarshalBinary()
		eb, _ := bt.MarshalBinary()
		if !bytes.Equal(ea, eb) {
			t.Errorf("%s: the parameters differ after the resumed steps", c.name)
		}
		if bytes.Equal(ea, snap) {
			t.Errorf("%s: the steps after the snapshot changed nothing", c.name)
		}
		// A snapshot restored into a trainer that has moved on brings it back.
		if err := a.UnmarshalBinary(snap); err != nil {
			t.Fatal(err)
		}
		if again, _ := a.MarshalBinary(); !bytes.Equal(again, snap) {
			t.Errorf("%s: restoring into a used trainer does not give the snapshot back", c.name)
		}
	}
}

func TestSnapshotErrors(t *testing.T) {
	const in, out, n = 4, 3, 8
	r := rand.New(rand.NewPCG(15, 16))
	X, y := randBatch(r, n, in, out)
	xt, yt := tensorsOf(X, y, in)
	newTr := func(m Model, cfg Config) *Trainer {
		tr, err := New(gobackend.GetBackend(), model.NewStore(), m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	qhm := Config{LR: 0.1, Beta: 0.9, Nu: 1}
	tr := newTr(models.Logreg(out), qhm)
	if _, err := tr.MarshalBinary(); err == nil {
		t.Error("snapshot before the first step: no error")
	}
	if _, err := tr.StepStats(xt, yt); err != nil {
		t.Fatal(err)
	}
	snap, err := tr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	check("truncated", newTr(models.Logreg(out), qhm).UnmarshalBinary(snap[:len(snap)-3]), "truncated")
	check("garbage", newTr(models.Logreg(out), qhm).UnmarshalBinary([]byte("hello")), "not a salsagomlx snapshot")
	check("trailing", newTr(models.Logreg(out), qhm).UnmarshalBinary(append(append([]byte{}, snap...), 0)), "trailing")
	adam := Config{LR: 0.1, Direction: Adam, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	check("direction", newTr(models.Logreg(out), adam).UnmarshalBinary(snap), "direction")
	other := newTr(models.Logreg(out+1), qhm)
	if _, err := other.StepStats(xt, yt); err != nil {
		t.Fatal(err)
	}
	check("shape", other.UnmarshalBinary(snap), "shape")
	v := bytes.Clone(snap)
	v[len(snapshotMagic)] = 9
	check("version", newTr(models.Logreg(out), qhm).UnmarshalBinary(v), "version 9")
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{LR: 0}, "LR = 0"},
		// the rate is kept in a float32 variable
		{Config{LR: 1e39}, "LR = 1e+39: outside float32's range"},
		{Config{LR: 1e-46}, "LR = 1e-46: outside float32's range"},
		{Config{LR: 1, Beta: 1}, "Beta = 1"},
		{Config{LR: 1, Direction: Adam, Beta1: 0.9, Beta2: 1, Eps: 1e-8}, "Beta2 = 1"},
		{Config{LR: 1, Direction: Adam, Beta1: 0.9, Beta2: 0.99}, "Eps = 0"},
		{Config{LR: 1, Direction: 7}, "Direction = 7"},
	} {
		_, err := New(gobackend.GetBackend(), model.NewStore(), models.Logreg(2), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.cfg, err, c.want)
		}
	}
	tr, err := New(gobackend.GetBackend(), model.NewStore(), models.Logreg(2), Config{LR: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, lr := range []float64{1e39, 1e-46} {
		if err := tr.SetLR(lr); err == nil || !strings.Contains(err.Error(), "outside float32's range") || tr.LR() != 1 {
			t.Errorf("SetLR(%v): err %v, LR %v; want the range error and LR 1", lr, err, tr.LR())
		}
	}
}

// recLoader is a model.Loader that holds nothing and records deletions.
type recLoader struct{ deleted []string }

func (l *recLoader) LoadVariable(*model.Store, string) (*tensors.Tensor, bool) { return nil, false }
func (l *recLoader) DeleteVariable(_ *model.Store, p string) error {
	l.deleted = append(l.deleted, p)
	return nil
}

// TestReleaseTellsTheLoader: a release deletes the copies from the store's
// loader too, which after a resume may hold copies no graph has loaded (a
// GoMLX checkpoint.Handler would save them again with every checkpoint).
func TestReleaseTellsTheLoader(t *testing.T) {
	tr, store := steppedLogreg(t)
	l := &recLoader{}
	store.SetLoader(l)
	if err := tr.keepOrRollback(schedule.Result{Step: 1, Save: true}); err != nil {
		t.Fatal(err)
	}
	if err := tr.keepOrRollback(schedule.Result{Step: 2, Release: true}); err != nil {
		t.Fatal(err)
	}
	for _, v := range tr.keptSources() {
		for _, sc := range copyScopes {
			if !slices.Contains(l.deleted, sc+v.Path()) {
				t.Errorf("the loader was not told to delete %s", sc+v.Path())
			}
		}
	}
}

// TestEarlierFlagsAlone: KeepEarlier without Confirm, or RollbackEarlier
// without Rollback, is an error that names both, and it copies nothing
// (the Save of the same step included).
func TestEarlierFlagsAlone(t *testing.T) {
	tr, store := steppedLogreg(t)
	for _, res := range []schedule.Result{{Step: 1, Save: true, KeepEarlier: true}, {Step: 1, Save: true, RollbackEarlier: true}} {
		err := tr.keepOrRollback(res)
		if err == nil || !strings.Contains(err.Error(), "each needs the other") {
			t.Errorf("%+v: err = %v", res, err)
		}
		for v := range store.IterVariables() {
			if copyPath(v.Path()) {
				t.Errorf("%+v: a copy %s was made", res, v.Path())
			}
		}
	}
}

// steppedLogreg is a logreg trainer (5 inputs, 3 classes) and its store,
// after one step on a batch of 8.
func steppedLogreg(t *testing.T) (*Trainer, *model.Store) {
	t.Helper()
	const in, out, n = 5, 3, 8
	store := model.NewStore()
	tr, err := New(gobackend.GetBackend(), store, models.Logreg(out), Config{LR: 0.1, Beta: 0.9, Nu: 1})
	if err != nil {
		t.Fatal(err)
	}
	X, y := randBatch(rand.New(rand.NewPCG(1, 2)), n, in, out)
	x, yt := tensorsOf(X, y, in)
	if _, err := tr.Step(x, yt); err != nil {
		t.Fatal(err)
	}
	return tr, store
}
