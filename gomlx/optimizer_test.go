package salsagomlx

import (
	"github.com/salsaopt/salsa/gomlx/models"
	"iter"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/optimizer"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/stats"
)

// toyData draws n examples of 3 Gaussian classes in 4 dimensions, class c
// shifted by 1.5 along axis c (overlapping, so that the loss stays noisy).
func toyData(r *rand.Rand, n int) ([]float32, []int32) {
	x := make([]float32, n*4)
	y := make([]int32, n)
	for i := range y {
		c := r.IntN(3)
		y[i] = int32(c)
		for k := 0; k < 4; k++ {
			x[i*4+k] = float32(r.NormFloat64())
		}
		x[i*4+c] += 1.5
	}
	return x, y
}

// toyDataset is an endless train.Dataset of toyData batches with labels
// [n, 1], as GoMLX's sparse losses expect.
type toyDataset struct {
	r *rand.Rand
	n int
}

func (d *toyDataset) Name() string { return "toy" }

func (d *toyDataset) Iter() iter.Seq2[train.Batch, error] {
	return func(yield func(train.Batch, error) bool) {
		for {
			x, y := toyData(d.r, d.n)
			b := train.Batch{
				Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(x, d.n, 4)},
				Labels: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(y, d.n, 1)},
			}
			if !yield(b, nil) {
				return
			}
		}
	}
}

// meanCE is Trainer.forward's loss as a train.LossFn: the mean softmax
// cross-entropy, built with the same ops, so that both graphs compute the
// same numbers.
func meanCE(labels, logits []*Node) *Node {
	logp := LogSoftmax(logits[0])
	y := Reshape(labels[0], labels[0].Shape().Dim(0))
	onehot := OneHot(y, logp.Shape().Dim(1), logp.DType())
	return ReduceAllMean(Neg(ReduceSum(Mul(onehot, logp), -1)))
}

func testSASAPlus(t *testing.T, lr0 float64) *schedule.SASAPlus {
	t.Helper()
	s, err := schedule.NewSASAPlus(schedule.SASAPlusConfig{LR0: lr0, Theta: 0.5, Delta: 0.05, Tau: 0.1,
		NMin: 20, KTest: 10, Variance: stats.BM})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// varSumSq returns Σx² over the variables under scope sc.
func varSumSq(t *testing.T, store *model.Store, sc string) (float64, int) {
	t.Helper()
	var s float64
	n := 0
	for v := range store.Scope(sc).IterVariables() {
		n++
		tensors.MustConstFlatData(v.MustValue(), func(f []float32) {
			for _, x := range f {
				s += float64(x) * float64(x)
			}
		})
	}
	return s, n
}

type stepRecord struct {
	st  Stats
	res schedule.Result
}

// TestOptimizerLoopMatchesTrainer trains the same softmax regression on the
// same batches twice, with SASA+ driving (a) the Optimizer inside GoMLX's
// train.NewTrainer + train.Loop and (b) the Trainer of this package, and
// checks that every step agrees: loss, ⟨x⁺,d⟩, ‖d‖², the scheduler's
// decisions. Trainer.Run sets α = s.LR() before each step and never divides
// it by √step, so the agreement shows that the Optimizer does the same; the
// first step uses s.LR() although the Optimizer was built with another LR.
// It also checks that the lr variable holds Result.NextLR after each step,
// that the momentum is zero after a drop and that a learning-rate change
// never rebuilt the graph. Adam, which the Optimizer shares with the
// Trainer, is checked the same way.
func TestOptimizerLoopMatchesTrainer(t *testing.T) {
	// Config.LR is overridden by s.LR() = lr0.
	t.Run("qhm", func(t *testing.T) {
		loopMatchesTrainer(t, Config{LR: 0.01, Beta: 0.9, Nu: 0.7, WeightDecay: 1e-3}, 0.5, "/h")
	})
	t.Run("adam", func(t *testing.T) {
		loopMatchesTrainer(t, Config{LR: 0.5, Direction: Adam, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-3},
			0.05, "/m")
	})
}

// loopMatchesTrainer is TestOptimizerLoopMatchesTrainer for one direction
// whose momentum lives under StateScope+momentum.
func loopMatchesTrainer(t *testing.T, cfg Config, lr0 float64, momentum string) {
	const in, out, batch, steps = 4, 3, 16, 400
	r := rand.New(rand.NewPCG(3, 4))
	w0 := normalWeights(r, in*out, 0.3)
	backend := gobackend.GetBackend()

	// (a) GoMLX's trainer and loop.
	store := model.NewStore()
	opt, err := NewOptimizer(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	trainer := train.NewTrainer(backend, store, (func(*model.Scope, *Node) *Node)(fixedLinear(w0, in, out)),
		meanCE, opt, nil, nil)
	loop := train.NewLoop(trainer)
	sa := testSASAPlus(t, lr0)
	if err := opt.Attach(loop, sa); err != nil {
		t.Fatal(err)
	}
	if err := opt.Attach(loop, sa); err == nil {
		t.Error("a second Attach was accepted")
	}
	var recA []stepRecord
	resets, hBefore := 0, 0.0
	loop.OnStep("test", 0, func(*train.Loop, []*tensors.Tensor) error {
		res := opt.LastResult()
		recA = append(recA, stepRecord{opt.LastStats(), res})
		lrv := tensors.ToScalar[float32](store.GetVariable(StateScope + "/lr").MustValue())
		if lrv != float32(res.NextLR) || opt.LR() != res.NextLR {
			t.Errorf("step %d: lr variable %v, host %v, want NextLR %v", res.Step, lrv, opt.LR(), res.NextLR)
		}
		h, n := varSumSq(t, store, StateScope+momentum)
		if n != 2 {
			t.Errorf("step %d: %d momentum variables, want 2", res.Step, n)
		}
		if res.ResetMomentum {
			resets++
			if h != 0 {
				t.Errorf("step %d: ‖h‖² = %v after a drop, want 0", res.Step, h)
			}
			if !(hBefore > 0) {
				t.Errorf("step %d: ‖h‖² = %v before the drop: the reset check is vacuous", res.Step, hBefore)
			}
		}
		hBefore = h
		return nil
	})
	ds := &toyDataset{r: rand.New(rand.NewPCG(5, 6)), n: batch}
	if _, err := loop.RunSteps(ds, steps); err != nil {
		t.Fatal(err)
	}

	// (b) this package's Trainer on the same batches.
	tr, err := New(backend, model.NewStore(), fixedLinear(w0, in, out), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sb := testSASAPlus(t, lr0)
	rb := rand.New(rand.NewPCG(5, 6))
	var recB []stepRecord
	for k := 0; k < steps; k++ {
		x, y := toyData(rb, batch)
		res, st, err := tr.Run(sb, tensors.FromFlatDataAndDimensions(x, batch, in), tensors.FromFlatDataAndDimensions(y, batch))
		if err != nil {
			t.Fatal(err)
		}
		recB = append(recB, stepRecord{st, res})
	}

	if len(recA) != steps {
		t.Fatalf("%d steps recorded, want %d", len(recA), steps)
	}
	if recA[0].res.LR != lr0 {
		t.Errorf("step 1 used lr %v, want s.LR() = %v", recA[0].res.LR, lr0)
	}
	var maxRel float64
	drops := 0
	for k := range recA {
		a, b := recA[k], recB[k]
		for _, p := range [][2]float64{{a.st.Loss, b.st.Loss}, {a.st.X1D, b.st.X1D}, {a.st.D2, b.st.D2}} {
			rel := math.Abs(p[0]-p[1]) / math.Max(1e-3, math.Abs(p[1]))
			maxRel = math.Max(maxRel, rel)
			if rel > 1e-5 {
				t.Errorf("step %d: loop %+v, Trainer %+v", k+1, a.st, b.st)
			}
		}
		if a.res.LR != b.res.LR || a.res.NextLR != b.res.NextLR || a.res.ResetMomentum != b.res.ResetMomentum ||
			len(a.res.Events) != len(b.res.Events) {
			t.Errorf("step %d: loop result %+v, Trainer result %+v", k+1, a.res, b.res)
		}
		if a.res.ResetMomentum {
			drops++
		}
	}
	t.Logf("%d drops, final lr %v, max relative difference %.3g, loss %.4f → %.4f",
		drops, sa.LR(), maxRel, recA[0].st.Loss, recA[steps-1].st.Loss)
	if drops < 2 || resets != drops {
		t.Errorf("%d drops (%d seen by the hook): want at least 2 on this toy problem", drops, resets)
	}
	if opt.builds != 1 {
		t.Errorf("UpdateGraph built %d graphs, want 1: a learning-rate change must not recompile", opt.builds)
	}
	if gs := trainer.GlobalStep(); gs != steps {
		t.Errorf("global step %d, want %d", gs, steps)
	}
}

// TestOptimizerLRSurvivesNewTrainer checks the pitfall the Optimizer avoids:
// train.NewTrainer deletes GoMLX's learning-rate variable
// "/optimizers/learning_rate", but not "/salsa/lr".
func TestOptimizerLRSurvivesNewTrainer(t *testing.T) {
	store := model.NewStore()
	gv := optimizer.LearningRateVarWithValue(store.RootScope(), dtypes.Float32, 0.3)
	if store.GetVariable("/"+optimizer.Scope+"/"+optimizer.ParamLearningRate) != gv {
		t.Fatalf("GoMLX's learning rate is at %s, not where this test looks", gv.Path())
	}
	opt, err := NewOptimizer(store, Config{LR: 0.7, Beta: 0.9, Nu: 1})
	if err != nil {
		t.Fatal(err)
	}
	train.NewTrainer(gobackend.GetBackend(), store, (func(*model.Scope, *Node) *Node)(models.Logreg(3)), meanCE, opt, nil, nil)
	if v := store.GetVariable("/" + optimizer.Scope + "/" + optimizer.ParamLearningRate); v != nil {
		t.Errorf("GoMLX's %s survived NewTrainer: the pitfall is gone", v.Path())
	}
	v := store.GetVariable(StateScope + "/lr")
	if v == nil {
		t.Fatal("NewTrainer deleted /salsa/lr")
	}
	if got := tensors.ToScalar[float32](v.MustValue()); got != 0.7 {
		t.Errorf("/salsa/lr = %v after NewTrainer, want 0.7", got)
	}
}

// TestOptimizerErrors checks that a searching scheduler is refused with an
// error that points to Trainer, and the other misuses.
func TestOptimizerErrors(t *testing.T) {
	backend := gobackend.GetBackend()
	if _, err := NewOptimizer(model.NewStore(), Config{LR: -1}); err == nil || !strings.Contains(err.Error(), "LR = -1") {
		t.Errorf("NewOptimizer(LR = -1): err = %v", err)
	}
	if _, err := NewOptimizer(nil, Config{LR: 1}); err == nil {
		t.Error("NewOptimizer(nil store) accepted")
	}
	store := model.NewStore()
	opt, err := NewOptimizer(store, Config{LR: 0.1, Beta: 0.9, Nu: 1})
	if err != nil {
		t.Fatal(err)
	}
	// On a store that has /salsa/lr already (a checkpoint, say), the
	// variable is reused and set to cfg.LR.
	if o2, err := NewOptimizer(store, Config{LR: 0.25}); err != nil {
		t.Fatal(err)
	} else if got := tensors.ToScalar[float32](store.GetVariable(StateScope + "/lr").MustValue()); got != 0.25 || o2.LR() != 0.25 {
		t.Errorf("/salsa/lr = %v (host %v) after a second NewOptimizer(LR 0.25)", got, o2.LR())
	}
	trainer := train.NewTrainer(backend, store, (func(*model.Scope, *Node) *Node)(models.Logreg(3)), meanCE, opt, nil, nil)
	loop := train.NewLoop(trainer)

	c, err := schedule.Defaults(schedule.PresetPaper, 1000, 10, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	ssls, err := schedule.NewSSLS(c.SSLS)
	if err != nil {
		t.Fatal(err)
	}
	salsa, err := schedule.NewSALSA(c.SALSA())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []schedule.Scheduler{ssls, salsa} {
		err := opt.Attach(loop, s)
		if err == nil || !strings.Contains(err.Error(), "line search") || !strings.Contains(err.Error(), "salsagomlx.Trainer") {
			t.Errorf("Attach(%s): err = %v, want a line-search error pointing to salsagomlx.Trainer", s.Name(), err)
		}
		if _, err := opt.AfterStep(s); err == nil || !strings.Contains(err.Error(), "line search") {
			t.Errorf("AfterStep(%s): err = %v", s.Name(), err)
		}
	}
	if err := opt.Attach(nil, ssls); err == nil {
		t.Error("Attach(nil loop) accepted")
	}
	if err := opt.Attach(train.NewLoop(train.NewTrainer(backend, model.NewStore(),
		(func(*model.Scope, *Node) *Node)(models.Logreg(3)), meanCE, opt, nil, nil)), testSASAPlus(t, 0.1)); err == nil {
		t.Error("Attach to a loop on another store accepted")
	}

	// A hand-written loop: AfterStep before any step, then two steps
	// without AfterStep, are errors; a step followed by AfterStep is not.
	sp := testSASAPlus(t, 0.1)
	if _, err := opt.AfterStep(sp); err == nil || !strings.Contains(err.Error(), "no step has run") {
		t.Errorf("AfterStep before any step: err = %v", err)
	}
	ds := &toyDataset{r: rand.New(rand.NewPCG(1, 1)), n: 8}
	next, stop := iter.Pull2(ds.Iter())
	defer stop()
	trainStep := func() {
		b, _, _ := next()
		if _, err := trainer.TrainStep(b); err != nil {
			t.Fatal(err)
		}
	}
	trainStep()
	if _, err := opt.AfterStep(sp); err != nil {
		t.Fatal(err)
	}
	trainStep()
	trainStep()
	if _, err := opt.AfterStep(sp); err == nil || !strings.Contains(err.Error(), "2 optimizer steps") {
		t.Errorf("AfterStep after two steps: err = %v", err)
	}
	if sp.Step() != 1 {
		t.Errorf("scheduler at step %d after a refused AfterStep, want 1", sp.Step())
	}
	// The lr the step used must be the scheduler's.
	sp2 := testSASAPlus(t, 0.2)
	trainStep()
	if _, err := opt.AfterStep(sp2); err == nil || !strings.Contains(err.Error(), "asked for lr 0.2") {
		t.Errorf("AfterStep with another lr: err = %v", err)
	}
	if sp2.Step() != 0 {
		t.Errorf("scheduler at step %d after a refused AfterStep, want 0", sp2.Step())
	}
}

// TestTrainerReusedStoreSetsLR: New on a store that already holds /salsa/lr
// sets it to cfg.LR instead of keeping the old value.
func TestTrainerReusedStoreSetsLR(t *testing.T) {
	backend := gobackend.GetBackend()
	store := model.NewStore()
	if _, err := New(backend, store, models.Logreg(3), Config{LR: 0.1, Beta: 0.9, Nu: 1}); err != nil {
		t.Fatal(err)
	}
	tr, err := New(backend, store, models.Logreg(3), Config{LR: 0.25, Beta: 0.9, Nu: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := tensors.ToScalar[float32](store.GetVariable(StateScope + "/lr").MustValue()); got != 0.25 || tr.LR() != 0.25 {
		t.Errorf("/salsa/lr = %v (host %v), want 0.25", got, tr.LR())
	}
}

// TestOptimizerReportsNorm: inside GoMLX's train.Loop, the Optimizer gives
// a scheduler that asks for it (schedule.NormAsker) ‖x_{k+1}‖², the sum of
// squares of the trainable variables after the step's update.
func TestOptimizerReportsNorm(t *testing.T) {
	const in, out, batch, steps = 4, 3, 16, 20
	w0 := normalWeights(rand.New(rand.NewPCG(3, 4)), in*out, 0.3)
	store := model.NewStore()
	opt, err := NewOptimizer(store, Config{LR: 0.1, Beta: 0.9, WeightDecay: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	trainer := train.NewTrainer(gobackend.GetBackend(), store, (func(*model.Scope, *Node) *Node)(fixedLinear(w0, in, out)),
		meanCE, opt, nil, nil)
	loop := train.NewLoop(trainer)
	rec := &recorder{Scheduler: testSASAPlus(t, 0.1), norm: true}
	if err := opt.Attach(loop, rec); err != nil {
		t.Fatal(err)
	}
	seen := 0
	loop.OnStep("test", 0, func(*train.Loop, []*tensors.Tensor) error {
		var x2 float64
		for v := range store.IterVariables() {
			if v.Trainable {
				tensors.MustConstFlatData(v.MustValue(), func(f []float32) {
					for _, x := range f {
						x2 += float64(x) * float64(x)
					}
				})
			}
		}
		if !(x2 > 0) || !near(rec.obs.X2, x2, 1e-6) {
			t.Errorf("step %d: X2 = %v, want ‖x‖² = %v", opt.LastResult().Step, rec.obs.X2, x2)
		}
		seen++
		return nil
	})
	if _, err := loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(5, 6)), n: batch}, steps); err != nil {
		t.Fatal(err)
	}
	if seen != steps {
		t.Errorf("%d steps checked, want %d", seen, steps)
	}
}
