package salsagomlx

import (
	"bytes"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/gomlx/gomlx/ml/train/metric"

	"github.com/salsaopt/salsa/gomlx/ops"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/stats"
)

// testSALSA is SALSA with short windows, switching to SASA+ at step
// switchAt (0: by its own tests), its line search along g.
func testSALSA(t *testing.T, lr0 float64, switchAt int) *schedule.SALSA {
	t.Helper()
	return testSALSAAlong(t, lr0, switchAt, schedule.AlongG)
}

// testSALSAAlong is testSALSA with its line search along the given direction.
func testSALSAAlong(t *testing.T, lr0 float64, switchAt int, along schedule.Along) *schedule.SALSA {
	t.Helper()
	s, err := schedule.NewSALSA(schedule.SALSAConfig{
		SSLS:          schedule.SSLSConfig{LR0: lr0, C: 0.05, RhoInc: 2, RhoDec: 0.5, Gamma: 0.1, M: 2, SearchAlong: along},
		SASAPlus:      schedule.SASAPlusConfig{LR0: lr0, Theta: 0.5, Delta: 0.05, Tau: 0.1, NMin: 20, KTest: 10, Variance: stats.BM},
		Slope:         schedule.SlopeConfig{Theta: 0.5, Delta: 0.05, NMin: 20, KTest: 10},
		ForceSwitchAt: switchAt,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNewTrainerMatchesTrainer trains the same softmax regression on the
// same batches with SALSA twice: (a) inside a stock train.Loop through
// NewTrainer and Optimizer.Attach, (b) with this package's Trainer.Run.
// Every step must agree: the loss, ‖g‖², the line search's trials (through
// the learning rate they give), ⟨x⁺,d⟩, ‖d‖² and the scheduler's decisions,
// across SALSA's switch from SSLS to SASA+ (which recompiles the train
// graph once) and its drops; with the line search along g, and along d
// (Config.SearchAlongD).
func TestNewTrainerMatchesTrainer(t *testing.T) {
	t.Run("along-g", func(t *testing.T) { newTrainerMatchesTrainer(t, schedule.AlongG) })
	t.Run("along-d", func(t *testing.T) { newTrainerMatchesTrainer(t, schedule.AlongD) })
}

func newTrainerMatchesTrainer(t *testing.T, along schedule.Along) {
	const in, out, batch, steps, switchAt = 4, 3, 16, 300, 60
	r := rand.New(rand.NewPCG(3, 4))
	w0 := normalWeights(r, in*out, 0.3)
	backend := gobackend.GetBackend()
	cfg := Config{LR: 0.1, Beta: 0.9, Nu: 1, WeightDecay: 1e-3, SearchAlongD: along == schedule.AlongD}

	store := model.NewStore()
	opt, err := NewOptimizer(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	trainer := NewTrainer(backend, store, (func(*model.Scope, *Node) *Node)(fixedLinear(w0, in, out)), meanCE, opt, nil, nil)
	loop := train.NewLoop(trainer)
	sa := testSALSAAlong(t, 0.1, switchAt, along)
	if err := opt.Attach(loop, sa); err != nil {
		t.Fatal(err)
	}
	var recA []stepRecord
	loop.OnStep("test", 0, func(l *train.Loop, _ []*tensors.Tensor) error {
		res := opt.LastResult()
		if res.Step != l.LoopStep+1 || int64(res.Step) != trainer.GlobalStep() {
			t.Errorf("result step %d, LoopStep %d, global step %d", res.Step, l.LoopStep, trainer.GlobalStep())
		}
		recA = append(recA, stepRecord{opt.LastStats(), res})
		return nil
	})
	if _, err := loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(5, 6)), n: batch}, steps); err != nil {
		t.Fatal(err)
	}

	tr, err := New(backend, model.NewStore(), fixedLinear(w0, in, out), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sb := testSALSAAlong(t, 0.1, switchAt, along)
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
	var maxRel float64
	searched, drops := 0, 0
	for k := range recA {
		a, b := recA[k], recB[k]
		for _, p := range [][2]float64{{a.st.Loss, b.st.Loss}, {a.st.GG, b.st.GG}, {a.st.X1D, b.st.X1D}, {a.st.D2, b.st.D2},
			{a.res.LR, b.res.LR}, {a.res.NextLR, b.res.NextLR}} {
			rel := math.Abs(p[0]-p[1]) / math.Max(1e-3, math.Abs(p[1]))
			maxRel = math.Max(maxRel, rel)
			if rel > 1e-5 {
				t.Errorf("step %d: loop %+v %+v, Trainer %+v %+v", k+1, a.st, a.res, b.st, b.res)
				break
			}
		}
		if a.res.Searched != b.res.Searched || a.res.ResetMomentum != b.res.ResetMomentum || len(a.res.Events) != len(b.res.Events) {
			t.Errorf("step %d: loop result %+v, Trainer result %+v", k+1, a.res, b.res)
		}
		if a.res.Searched {
			searched++
		}
		if a.res.ResetMomentum {
			drops++
		}
	}
	t.Logf("%d searching steps, %d drops, final lr %v, max relative difference %.3g, loss %.4f → %.4f",
		searched, drops, sa.LR(), maxRel, recA[0].st.Loss, recA[steps-1].st.Loss)
	if searched == 0 || searched > switchAt || drops < 1 {
		t.Errorf("%d searching steps (want 1 to %d), %d drops (want ≥ 1)", searched, switchAt, drops)
	}
	if opt.builds != 2 {
		t.Errorf("UpdateGraph built %d graphs, want 2 (one searching, one plain after the switch)", opt.builds)
	}
	if gs := trainer.GlobalStep(); gs != steps {
		t.Errorf("global step %d, want %d", gs, steps)
	}
}

// toyBatches is a finite train.Dataset: the same toyData examples from
// seed, in batches of n.
type toyBatches struct {
	seed       uint64
	n, batches int
}

func (d *toyBatches) Name() string { return "toy batches" }

func (d *toyBatches) Iter() iter.Seq2[train.Batch, error] {
	return func(yield func(train.Batch, error) bool) {
		r := rand.New(rand.NewPCG(d.seed, 1))
		for k := 0; k < d.batches; k++ {
			x, y := toyData(r, d.n)
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

// TestNewTrainerEvalAndScope trains a model that puts its variables under
// the user's own scope "/mynet" with SALSA in a train.Loop, and checks that
// they stay there (nothing under "/model"), and that Trainer.Eval on the Go
// backend follows the training and averages every batch: an evaluation
// after more steps differs from the first, and 10 batches of 100 give the
// mean of one batch of the same 1000 examples.
func TestNewTrainerEvalAndScope(t *testing.T) {
	backend := gobackend.GetBackend()
	store := model.NewStore()
	opt, err := NewOptimizer(store, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mine := func(scope *model.Scope, x *Node) *Node {
		return layers.DenseWithBias(scope.In("mynet").In("dense"), x, 3)
	}
	acc := metric.NewSparseCategoricalAccuracy("Mean Accuracy", "#acc")
	trainer := NewTrainer(backend, store, mine, loss.SparseCategoricalCrossEntropyLogits, opt, nil, []metric.Interface{acc})
	loop := train.NewLoop(trainer)
	if err := opt.Attach(loop, testSALSA(t, 0.1, 0)); err != nil {
		t.Fatal(err)
	}
	ds := &toyDataset{r: rand.New(rand.NewPCG(7, 8)), n: 16}
	eval := func(batch, batches int) (loss, acc float64) {
		m, err := trainer.Eval(&toyBatches{seed: 9, n: batch, batches: batches})
		if err != nil {
			t.Fatal(err)
		}
		return shapes.ConvertTo[float64](m[0].Value()), shapes.ConvertTo[float64](m[1].Value())
	}
	if _, err := loop.RunSteps(ds, 5); err != nil {
		t.Fatal(err)
	}
	l1, a1 := eval(100, 10)
	if _, err := loop.RunSteps(ds, 200); err != nil {
		t.Fatal(err)
	}
	l2, a2 := eval(100, 10)
	l3, a3 := eval(1000, 1)
	t.Logf("after 5 steps: loss %.4f acc %.3f; after 205: loss %.4f acc %.3f (one batch: %.4f %.3f)", l1, a1, l2, a2, l3, a3)
	if l1 == l2 || !(l2 < l1) {
		t.Errorf("eval loss %v after 5 steps, %v after 205: the evaluation does not follow the training", l1, l2)
	}
	if math.Abs(l2-l3) > 1e-5*l3 || math.Abs(a2-a3) > 1e-6 {
		t.Errorf("10 batches of 100: loss %v acc %v; one batch of the same 1000: %v %v", l2, a2, l3, a3)
	}
	var mineVars, modelVars int
	for v := range store.IterVariables() {
		switch {
		case strings.HasPrefix(v.Path(), "/mynet/"):
			mineVars++
		case strings.HasPrefix(v.Path(), "/model/"):
			modelVars++
		}
	}
	if mineVars != 2 || modelVars != 0 {
		t.Errorf("%d variables under /mynet (want 2), %d under /model (want 0)", mineVars, modelVars)
	}
}

// TestCheckpointResumeWhileSearching saves a GoMLX checkpoint during
// SALSA's SSLS phase (a line search at every step, dropout in the model),
// restores it into a fresh program and checks that both go on bit for bit:
// the losses, the learning rates the line search picks and the scheduler's
// state; and that the checkpoint has no scratch variable.
func TestCheckpointResumeWhileSearching(t *testing.T) {
	dir := t.TempDir()
	type program struct {
		opt    *Optimizer
		sched  *schedule.SALSA
		loop   *train.Loop
		h      *checkpoint.Handler
		losses []float64
		lrs    []float64
	}
	start := func() *program {
		p := &program{sched: testSALSA(t, 0.1, 0)}
		store := model.NewStore()
		if err := store.SetRNGStateFromSeed(3); err != nil {
			t.Fatal(err)
		}
		var err error
		if p.h, err = checkpoint.Build(store).Dir(dir).Done(); err != nil {
			t.Fatal(err)
		}
		if p.opt, err = NewOptimizer(store, DefaultConfig()); err != nil {
			t.Fatal(err)
		}
		net := func(scope *model.Scope, x *Node) *Node {
			x = activation.Relu(layers.DenseWithBias(scope.In("hidden"), x, 8))
			x = layers.Dropout(scope, x, Scalar(x.Graph(), x.DType(), 0.2))
			return layers.DenseWithBias(scope.In("out"), x, 3)
		}
		trainer := NewTrainer(gobackend.GetBackend(), store, net, loss.SparseCategoricalCrossEntropyLogits, p.opt, nil, nil)
		p.loop = train.NewLoop(trainer)
		if err := p.opt.Attach(p.loop, p.sched); err != nil {
			t.Fatal(err)
		}
		p.loop.OnStep("record", 0, func(*train.Loop, []*tensors.Tensor) error {
			p.losses = append(p.losses, p.opt.LastStats().Loss)
			p.lrs = append(p.lrs, p.opt.LastResult().LR)
			return nil
		})
		return p
	}
	a := start()
	if _, err := a.loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(1, 1)), n: 16}, 30); err != nil {
		t.Fatal(err)
	}
	if !a.sched.Searching() {
		t.Fatal("SALSA switched before the save: the test needs a searching step")
	}
	if err := a.h.Save(); err != nil {
		t.Fatal(err)
	}
	saved, _ := a.sched.MarshalBinary()
	b := start()
	restored, _ := b.sched.MarshalBinary()
	if !bytes.Equal(saved, restored) || b.opt.LR() != a.opt.LR() {
		t.Fatalf("restored scheduler differs (lr %v, want %v)", b.opt.LR(), a.opt.LR())
	}
	for name := range b.h.LoadedVariables() {
		if scratchPath(strings.TrimPrefix(name, "var:")) {
			t.Errorf("the checkpoint holds the scratch variable %s", name)
		}
	}
	n := len(a.losses)
	for _, p := range []*program{a, b} {
		if _, err := p.loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(2, 2)), n: 16}, 40); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(a.losses[n:]) != fmt.Sprint(b.losses) || fmt.Sprint(a.lrs[n:]) != fmt.Sprint(b.lrs) {
		t.Errorf("after the resume:\nlosses %v\n  want %v\nlrs %v\nwant %v", b.losses, a.losses[n:], b.lrs, a.lrs[n:])
	}
	sa, _ := a.sched.MarshalBinary()
	sb, _ := b.sched.MarshalBinary()
	if !bytes.Equal(sa, sb) {
		t.Error("the schedulers differ 40 steps after the resume")
	}
	t.Logf("lr at the save %v, 40 steps later %v; searching then: %v", a.lrs[n-1], a.opt.LR(), a.sched.Searching())
}

// probe is a scheduler that searches at every step and asks for one trial
// at η = 0, recording the loss and the trial, then updates at lr.
type probe struct {
	lr           float64
	step         int
	loss, trials []float64
}

func (p *probe) Name() string    { return "probe" }
func (p *probe) LR() float64     { return p.lr }
func (p *probe) Step() int       { return p.step }
func (p *probe) Searching() bool { return true }
func (p *probe) Begin(loss, _ float64) (schedule.Request, error) {
	p.loss = append(p.loss, loss)
	return schedule.Request{Eval: true, Eta: 0}, nil
}
func (p *probe) Trial(f float64) (schedule.Request, error) {
	p.trials = append(p.trials, f)
	return schedule.Request{LR: p.lr}, nil
}
func (p *probe) End(schedule.Observation) (schedule.Result, error) {
	p.step++
	return schedule.Result{Step: p.step, LR: p.lr, NextLR: p.lr, Searched: true}, nil
}
func (p *probe) Abort()                         {}
func (p *probe) MarshalBinary() ([]byte, error) { return nil, nil }
func (p *probe) UnmarshalBinary([]byte) error   { return nil }

// TestLoopTrialAtZeroIsTheLoss: in a train.Loop, the trial at η = 0 is the
// loss the train step computed, bit for bit, for a model with batch norm
// (ops.BatchNorm: the batch's statistics) and dropout (the step's mask):
// the trial evaluates the same function of x on the same batch.
func TestLoopTrialAtZeroIsTheLoss(t *testing.T) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(5); err != nil {
		t.Fatal(err)
	}
	opt, err := NewOptimizer(store, Config{LR: 0.05, Beta: 0.9, Nu: 1, WeightDecay: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	net := bnNet(3, 0.3)
	trainer := NewTrainer(gobackend.GetBackend(), store, net, loss.SparseCategoricalCrossEntropyLogits, opt, nil, nil)
	loop := train.NewLoop(trainer)
	p := &probe{lr: 0.05}
	if err := opt.Attach(loop, p); err != nil {
		t.Fatal(err)
	}
	if _, err := loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(3, 3)), n: 16}, 20); err != nil {
		t.Fatal(err)
	}
	if len(p.trials) != 20 {
		t.Fatalf("%d trials, want 20", len(p.trials))
	}
	for k := range p.trials {
		if p.trials[k] != p.loss[k] {
			t.Errorf("step %d: trial at η = 0 is %v, the step's loss %v", k+1, p.trials[k], p.loss[k])
		}
	}
	t.Logf("losses %.4f … %.4f", p.loss[0], p.loss[19])
}

// A scheduler whose line search runs along d cannot drive a Trainer or an
// Optimizer that evaluates trials along g, and the other way round.
func TestSearchDirectionMustAgree(t *testing.T) {
	backend := gobackend.GetBackend()
	w0 := make([]float32, 4*3)
	for _, along := range []schedule.Along{schedule.AlongG, schedule.AlongD} {
		cfg := Config{LR: 0.1, Beta: 0.9, Nu: 1, SearchAlongD: along == schedule.AlongG} // the other one
		tr, err := New(backend, model.NewStore(), fixedLinear(w0, 4, 3), cfg)
		if err != nil {
			t.Fatal(err)
		}
		x, y := toyData(rand.New(rand.NewPCG(1, 2)), 8)
		_, _, err = tr.Run(testSALSAAlong(t, 0.1, 0, along), tensors.FromFlatDataAndDimensions(x, 8, 4), tensors.FromFlatDataAndDimensions(y, 8))
		if err == nil || !strings.Contains(err.Error(), "must agree") {
			t.Errorf("Trainer.Run with a search along %v and SearchAlongD %v: error %v, want one saying they must agree", along, cfg.SearchAlongD, err)
		}

		store := model.NewStore()
		opt, err := NewOptimizer(store, cfg)
		if err != nil {
			t.Fatal(err)
		}
		trainer := NewTrainer(backend, store, (func(*model.Scope, *Node) *Node)(fixedLinear(w0, 4, 3)), meanCE, opt, nil, nil)
		err = opt.Attach(train.NewLoop(trainer), testSALSAAlong(t, 0.1, 0, along))
		if err == nil || !strings.Contains(err.Error(), "must agree") {
			t.Errorf("Attach with a search along %v and SearchAlongD %v: error %v, want one saying they must agree", along, cfg.SearchAlongD, err)
		}
	}
}

// probeLoop is the stock train.Loop of the probe's tests: a linear model of
// 4 inputs and 3 classes, its Optimizer at α_0 0.01 with weight decay 1e-3.
func probeLoop(t *testing.T) (*model.Store, *Optimizer, *train.Loop) {
	t.Helper()
	const in, out = 4, 3
	r := rand.New(rand.NewPCG(3, 4))
	w0 := normalWeights(r, in*out, 0.3)
	store := model.NewStore()
	opt, err := NewOptimizer(store, Config{LR: 0.01, Beta: 0.9, Nu: 1, WeightDecay: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	trainer := NewTrainer(gobackend.GetBackend(), store, (func(*model.Scope, *Node) *Node)(fixedLinear(w0, in, out)), meanCE, opt, nil, nil)
	return store, opt, train.NewLoop(trainer)
}

// TestNewTrainerRollback: salsa-budget's rate probe with rollbacks inside a
// stock train.Loop. The Optimizer keeps the trainable variables when the
// scheduler asks (Result.Save), keeps the copy it confirms (Result.Confirm),
// and a failed rate puts that back exactly, with the momentum zeroed; the
// release that follows deletes the copies.
// Keeping them adds variables to the store but recompiles no train graph.
func TestNewTrainerRollback(t *testing.T) {
	const batch, steps = 16, 300
	store, opt, loop := probeLoop(t)
	inner := testSALSAAlong(t, 0.01, 0, schedule.AlongG)
	s, err := schedule.NewTail(schedule.TailConfig{Steps: steps, Fraction: 0.2, FromSwitch: true, Probe: true,
		ProbeEarly: true, ProbeRollback: true}, inner)
	if err != nil {
		t.Fatal(err)
	}
	if err := opt.Attach(loop, s); err != nil {
		t.Fatal(err)
	}
	params := func() []float32 {
		var ws []float32
		for v := range store.IterVariables() {
			if v.Trainable {
				ws = append(ws, tensors.MustCopyFlatData[float32](v.MustValue())...)
			}
		}
		return ws
	}
	var kept, cand []float32
	saves, rollbacks, releases := 0, 0, 0
	loop.OnStep("test", 0, func(*train.Loop, []*tensors.Tensor) error {
		res := opt.LastResult()
		if res.Confirm {
			kept = cand
		}
		switch {
		case res.Save:
			saves++
			cand = params()
		case res.Rollback:
			rollbacks++
			if got := params(); kept == nil || !slices.Equal(got, kept) {
				t.Errorf("step %d: rolled back to %v, kept %v", res.Step, got, kept)
			}
			if h, _ := varSumSq(t, store, StateScope+"/h"); h != 0 {
				t.Errorf("step %d: ‖h‖² = %v after the rollback, want 0", res.Step, h)
			}
		}
		if res.Release {
			releases++
			for v := range store.IterVariables() {
				if copyPath(v.Path()) {
					t.Errorf("step %d: %s still in the store after the release", res.Step, v.Path())
				}
			}
		}
		return nil
	})
	if _, err := loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(5, 6)), n: batch}, steps); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d saves, %d rollbacks, %d releases; train graphs built %d", saves, rollbacks, releases, opt.builds)
	if saves == 0 || rollbacks != 1 || releases != 1 {
		t.Errorf("%d saves, %d rollbacks and %d releases, want some saves, one rollback and one release: the test covers nothing",
			saves, rollbacks, releases)
	}
	if opt.builds != 2 { // the searching graph of SSLS, then the plain one
		t.Errorf("UpdateGraph built %d graphs, want 2", opt.builds)
	}
}

// TestNewTrainerProbeVal: the rate probe with ProbeVal inside a stock
// train.Loop. Attach refuses it until the optimizer can evaluate a
// validation loss (SetValLoss); then AfterStep calls that at exactly the
// steps whose End asks, and the step's Result (LastResult) is the one that
// ReportVal returned, with the validation loss in its event.
func TestNewTrainerProbeVal(t *testing.T) {
	const batch, steps = 16, 300
	_, opt, loop := probeLoop(t)
	tc := schedule.TailConfig{Steps: steps, Fraction: 0.2, FromSwitch: true}.WithProbe()
	tc.ProbeVal = true
	tc.Average = false // the Optimizer refuses it (TestAverageRefusals)
	s, err := schedule.NewTail(tc, testSALSAAlong(t, 0.01, 0, schedule.AlongG))
	if err != nil {
		t.Fatal(err)
	}
	if err := opt.Attach(loop, s); err == nil || !strings.Contains(err.Error(), "SetValLoss") {
		t.Fatalf("Attach without SetValLoss: err = %v, want one naming SetValLoss", err)
	}
	calls := 0
	opt.SetValLoss(func() (float64, error) {
		calls++
		return 2 - float64(calls)/100, nil
	})
	if err := opt.Attach(loop, s); err != nil {
		t.Fatal(err)
	}
	checks := 0
	loop.OnStep("test", 0, func(*train.Loop, []*tensors.Tensor) error {
		res := opt.LastResult()
		if res.NeedVal {
			t.Errorf("step %d: LastResult still asks for the validation loss", res.Step)
		}
		for _, e := range res.Events {
			if e.Kind == schedule.KindValidation {
				checks++
				if want := 2 - float64(calls)/100; e.ValLoss != want {
					t.Errorf("step %d: validation loss %v in the event, want the last reported %v", res.Step, e.ValLoss, want)
				}
			}
		}
		return nil
	})
	if _, err := loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(5, 6)), n: batch}, steps); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d validation losses asked for in %d steps", calls, steps)
	if calls == 0 || checks != calls {
		t.Errorf("%d validation losses evaluated, %d checks in the events: want as many, and some", calls, checks)
	}
}

// nanAfter yields d's batches, batch k (from 0) with a NaN feature.
type nanAfter struct {
	d *toyDataset
	k int
}

func (n *nanAfter) Name() string { return "toy-nan" }

func (n *nanAfter) Iter() iter.Seq2[train.Batch, error] {
	return func(yield func(train.Batch, error) bool) {
		i := 0
		for b, err := range n.d.Iter() {
			if i == n.k {
				x := tensors.MustCopyFlatData[float32](b.Inputs[0])
				x[1] = float32(math.NaN())
				b.Inputs[0] = tensors.FromFlatDataAndDimensions(x, b.Inputs[0].Shape().Dimensions...)
			}
			i++
			if !yield(b, err) {
				return
			}
		}
	}
}

// TestLoopNaNBatch: in a stock train.Loop, a batch with a NaN feature makes
// the step's loss NaN; the scheduler refuses it, the loop stops with the
// error, and the step wrote none of the variables it would have changed: the
// model's (batch-norm statistics included), the momentum, the search
// direction and the RNG hold their values from before it, for the fused step
// (sasa+) and the searching one (ssls).
func TestLoopNaNBatch(t *testing.T) {
	for _, method := range []string{"sasa+", "ssls"} {
		store := model.NewStore()
		opt, err := NewOptimizer(store, Config{LR: 0.05, Beta: 0.9, Nu: 1, WeightDecay: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		net := bnNet(3, 0.3)
		trainer := NewTrainer(gobackend.GetBackend(), store, net, loss.SparseCategoricalCrossEntropyLogits, opt, nil, nil)
		loop := train.NewLoop(trainer)
		s := realSched(t, method, 640, 16, 0.05)
		if err := opt.Attach(loop, s); err != nil {
			t.Fatal(err)
		}
		values := func() map[string]string {
			m := map[string]string{}
			for v := range store.IterVariables() {
				// the step's outputs and counters, and the loop's metrics
				// (its moving average of the loss), record the refused step
				if p := v.Path(); !strings.HasPrefix(p, stepScope+"/") && !strings.Contains(p, "global_step") && !strings.HasPrefix(p, "/metrics/") {
					m[p] = fmt.Sprint(v.MustValue().Value())
				}
			}
			return m
		}
		ds := &toyDataset{r: rand.New(rand.NewPCG(3, 3)), n: 16}
		if _, err := loop.RunSteps(ds, 3); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		before := values()
		if _, err := loop.RunSteps(&nanAfter{d: ds, k: 0}, 1); err == nil || !strings.Contains(err.Error(), "NaN") {
			t.Fatalf("%s: the NaN batch: err = %v, want the scheduler's refusal of a NaN loss", method, err)
		}
		if s.Step() != 3 {
			t.Errorf("%s: scheduler at step %d after the NaN batch, want 3", method, s.Step())
		}
		after := values()
		for p, v := range before {
			if after[p] != v {
				t.Errorf("%s: the refused step changed %s:\n%s\nwas\n%s", method, p, after[p], v)
			}
		}
	}
}

// TestScratchAlongD: with Config.SearchAlongD the kept search direction
// s = d_k (under /salsa/s) is scratch like g: ScratchVariables lists it, so
// that checkpoints leave it out, and Clear deletes it.
func TestScratchAlongD(t *testing.T) {
	const in, out = 4, 3
	r := rand.New(rand.NewPCG(3, 4))
	store := model.NewStore()
	opt, err := NewOptimizer(store, Config{LR: 0.01, Beta: 0.9, Nu: 1, SearchAlongD: true})
	if err != nil {
		t.Fatal(err)
	}
	trainer := NewTrainer(gobackend.GetBackend(), store, (func(*model.Scope, *Node) *Node)(fixedLinear(normalWeights(r, in*out, 0.3), in, out)), meanCE, opt, nil, nil)
	loop := train.NewLoop(trainer)
	if err := opt.Attach(loop, testSALSAAlong(t, 0.01, 0, schedule.AlongD)); err != nil {
		t.Fatal(err)
	}
	if _, err := loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(3, 3)), n: 16}, 2); err != nil {
		t.Fatal(err)
	}
	along := func(vs []*model.Variable) (n int) {
		for _, v := range vs {
			if strings.HasPrefix(v.Path(), StateScope+"/s/") {
				n++
			}
		}
		return n
	}
	var all []*model.Variable
	for v := range store.IterVariables() {
		all = append(all, v)
	}
	if n := along(all); n == 0 {
		t.Fatal("no variable under /salsa/s after two steps along d")
	}
	if a, s := along(all), along(opt.ScratchVariables()); s != a {
		t.Errorf("ScratchVariables lists %d of the %d variables under /salsa/s", s, a)
	}
	if err := opt.Clear(nil); err != nil {
		t.Fatal(err)
	}
	all = all[:0]
	for v := range store.IterVariables() {
		all = append(all, v)
	}
	if n := along(all); n != 0 {
		t.Errorf("%d variables under /salsa/s after Clear", n)
	}
}

// TestLoopRollbackSources: in a train.Loop the model's variables are at the
// loop's scope, not /model; a rollback must put back the batch-norm
// statistics with the parameters, and nothing of the loop's own (its step
// counter, its metrics) or of the trainer's.
func TestLoopRollbackSources(t *testing.T) {
	store := model.NewStore()
	opt, err := NewOptimizer(store, Config{LR: 0.05, Beta: 0.9, Nu: 1})
	if err != nil {
		t.Fatal(err)
	}
	net := bnNet(3, 0)
	loop := train.NewLoop(NewTrainer(gobackend.GetBackend(), store, net, loss.SparseCategoricalCrossEntropyLogits, opt, nil, nil))
	if err := opt.Attach(loop, testSASAPlus(t, 0.05)); err != nil {
		t.Fatal(err)
	}
	if _, err := loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(3, 3)), n: 16}, 2); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range opt.t.keptSources() {
		got = append(got, v.Path())
	}
	want := []string{"/bn/mean", "/bn/offset", "/bn/scale", "/bn/variance", "/hidden/dense/biases", "/hidden/dense/weights", "/out/dense/biases", "/out/dense/weights"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("a rollback puts back %v, want %v", got, want)
	}
}

// TestLoopFloat64Model: a model with float64 parameters and loss runs in a
// train.Loop with a searching scheduler and with a plain one: the trials'
// and the update's results are read in the model's dtype.
func TestLoopFloat64Model(t *testing.T) {
	net := func(scope *model.Scope, x *Node) *Node {
		x = ConvertDType(x, dtypes.Float64)
		w := scope.WithInitializer(Zeros).VariableWithShape("w", shapes.Make(dtypes.Float64, 4, 3)).NodeValue(x.Graph())
		return MatMul(x, w)
	}
	for _, search := range []bool{false, true} {
		store := model.NewStore()
		opt, err := NewOptimizer(store, Config{LR: 0.05, Beta: 0.9, Nu: 1})
		if err != nil {
			t.Fatal(err)
		}
		loop := train.NewLoop(NewTrainer(gobackend.GetBackend(), store, net, meanCE, opt, nil, nil))
		var s schedule.Scheduler = testSASAPlus(t, 0.05)
		if search {
			s = testSALSAAlong(t, 0.05, 0, schedule.AlongG)
		}
		if err := opt.Attach(loop, s); err != nil {
			t.Fatal(err)
		}
		if _, err := loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(3, 3)), n: 16}, 3); err != nil {
			t.Fatalf("search %v: %v", search, err)
		}
		if s.Step() != 3 {
			t.Errorf("search %v: scheduler at step %d, want 3", search, s.Step())
		}
	}
}

// TestLoopDropBetweenSteps: a -val scheduler's Validate drops the rate
// between steps; Optimizer.Apply sets α and zeroes the momentum, and the
// next step runs at the new rate (without Apply, AfterStep refuses it).
func TestLoopDropBetweenSteps(t *testing.T) {
	for _, apply := range []bool{true, false} {
		store, opt, loop := probeLoop(t)
		s, err := schedule.NewWithValidation(testSASAPlus(t, 0.05), schedule.ValidationConfig{Patience: 0})
		if err != nil {
			t.Fatal(err)
		}
		if err := opt.Attach(loop, s); err != nil {
			t.Fatal(err)
		}
		var dropped schedule.Result
		loop.OnStep("validate", HookPriority+1, func(l *train.Loop, _ []*tensors.Tensor) error {
			if l.LoopStep != 1 {
				return nil
			}
			if _, err := s.Validate(1); err != nil {
				return err
			}
			res, err := s.Validate(2) // not better: a drop
			if err != nil {
				return err
			}
			dropped = res
			if apply {
				return opt.Apply(res)
			}
			return nil
		})
		_, err = loop.RunSteps(&toyDataset{r: rand.New(rand.NewPCG(3, 3)), n: 16}, 4)
		lr0, tau := 0.05, 0.1
		want := lr0 * tau // in float64, as the drop computes it
		if dropped.NextLR != want || !dropped.ResetMomentum {
			t.Fatalf("the validation drop: NextLR %v, reset %v; want %v with a momentum reset", dropped.NextLR, dropped.ResetMomentum, want)
		}
		if !apply {
			if err == nil || !strings.Contains(err.Error(), "0.005") {
				t.Errorf("without Apply: err = %v, want AfterStep's refusal naming the new rate", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if opt.LR() != want || s.Step() != 4 {
			t.Errorf("after the drop: α %v at step %d, want %v at 4", opt.LR(), s.Step(), want)
		}
		_ = store
	}
}

// bnNet is a small classifier with batch norm (its running statistics are
// non-trainable variables) and, with dropout > 0, dropout (it draws from the
// store's RNG): 8 hidden units, out classes.
func bnNet(out int, dropout float64) func(*model.Scope, *Node) *Node {
	return func(scope *model.Scope, x *Node) *Node {
		x = layers.DenseWithBias(scope.In("hidden"), x, 8)
		x = activation.Relu(ops.BatchNorm(scope.In("bn"), x, 0.1, 1e-5))
		if dropout > 0 {
			x = layers.Dropout(scope, x, Scalar(x.Graph(), x.DType(), dropout))
		}
		return layers.DenseWithBias(scope.In("out"), x, out)
	}
}
