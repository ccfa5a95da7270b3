package salsagomlx

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/optimizer"

	"github.com/salsaopt/salsa/schedule"
)

// Paths of the per-step outputs of [Optimizer.UpdateGraph], read by the host
// after each step. They are not part of the direction's state.
const (
	stepScope   = StateScope + "/step"
	stepLossVar = stepScope + "/loss" // f_ξk(x_k) + L2, scalar
	stepX1DVar  = stepScope + "/x1d"  // [⟨x_{k+1,i}, d_{k,i}⟩]_i, one per tensor
	stepD2Var   = stepScope + "/d2"   // [‖d_{k,i}‖²]_i, one per tensor
	stepCount   = stepScope + "/count"
)

// HookPriority is the priority of the OnStep hook that [Optimizer.Attach]
// registers: it runs before the hooks of GoMLX's default priority 0, which
// may read [Optimizer.LastResult] of the same step.
const HookPriority train.Priority = -1000

// Optimizer is the direction of a [Config] (statopt's QHM, or Adam) as a
// GoMLX optimizer.Interface, for use with train.Trainer and train.Loop, and
// the host side that lets a [schedule.Scheduler] set its learning rate: a
// non-searching one (SASA+, and the baselines that need no line search)
// with any train.Trainer, a searching one (SSLS, SALSA) with a trainer from
// [NewTrainer], which lets the line search evaluate the step's batch.
//
// Each step, [Optimizer.UpdateGraph] computes in the graph
// g_k = ∇f + wd·x, d_k, x_{k+1} = x_k − α·d_k, and stores into scalar and
// per-tensor non-trainable variables under "/salsa/step" the loss
// f_ξk(x_k) + 0.5·wd·‖x_k‖², ⟨x_{k+1},d_k⟩ and ‖d_k‖². α is read from the
// variable "/salsa/lr", set from the host between steps: a change never
// recompiles. It lives outside GoMLX's optimizer scope "/optimizers", whose
// "learning_rate" train.NewTrainer deletes, and it is not divided by √step as
// GoMLX's SGD does by default.
//
// The loss given to UpdateGraph is f, without the L2 term: Config.WeightDecay
// adds 0.5·wd·‖x‖² (over the trainable variables) to the loss the scheduler
// sees and wd·x to g, as [Trainer] does and as statopt's loss does. GoMLX's
// "loss" metric therefore excludes the L2 term.
//
// SSLS and SALSA (whose warmup is SSLS) need trial losses at x − η·g on the
// step's mini-batch, which UpdateGraph cannot compute because it does not see
// the inputs: build the train.Trainer with [NewTrainer], which gives the
// optimizer the model and loss and keeps the inputs. A searching step's
// UpdateGraph then computes the loss and g only, and keeps g, the batch and
// the RNG state in scratch variables; the OnStep hook of [Optimizer.Attach]
// runs the line search and the update.
type Optimizer struct {
	t      *Trainer // store, cfg and the lr variable; only its graph helpers and host setters are used
	builds int      // number of graphs UpdateGraph has built

	count int64 // the value of the step counter after the last step seen by AfterStep; -1: not known
	sched schedule.Scheduler
	last  schedule.Result
	stats Stats

	// Set by NewTrainer: the model and loss, for the trials of a line search.
	trainer *train.Trainer
	modelFn train.ModelFn
	lossFn  train.LossFn

	search      bool              // the next train graph keeps g for a line search instead of updating x
	builtSearch bool              // the mode of the last graph UpdateGraph built
	bound       []*model.Variable // the variables the last searching train graph read
	spec        any               // the dataset's spec of that graph
	nInputs     int
	nLabels     int
	trial       *model.Exec // f(x − η·g) + L2 on the kept batch
	update      *model.Exec // x ← x − α·d from the kept g

	excludedFor  *checkpoint.Handler // the handler the scratch variables were last excluded from
	excludedVars int                 // the store's number of variables then
}

var _ optimizer.Interface = (*Optimizer)(nil)

// NewOptimizer returns an Optimizer whose state lives in store under
// "/salsa" (which belongs to one Optimizer or [Trainer]); it sets the
// learning-rate variable "/salsa/lr" to cfg.LR, creating it or, when the
// store has it already (restored from a checkpoint, say), overwriting it.
// Create it before train.NewTrainer and pass it as the trainer's optimizer.
func NewOptimizer(store *model.Store, cfg Config) (*Optimizer, error) {
	if store == nil {
		return nil, errors.New("salsagomlx: store must not be nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Direction == Host {
		return nil, errors.New("salsagomlx: the Host direction runs in a Trainer only: an Optimizer's update is a graph op (QHM or Adam)")
	}
	t := &Trainer{store: store, cfg: cfg, lr: cfg.LR}
	var err error
	if t.lrVar, err = lrVariable(store, cfg.LR); err != nil {
		return nil, err
	}
	return &Optimizer{t: t}, nil
}

// Config returns the optimizer's configuration.
func (o *Optimizer) Config() Config { return o.t.cfg }

// LR is the learning rate the next step uses.
func (o *Optimizer) LR() float64 { return o.t.lr }

// SetLR sets α for the next steps; it changes a variable, not the graph.
func (o *Optimizer) SetLR(lr float64) error { return o.t.SetLR(lr) }

// ResetMomentum zeroes the direction's state (QHM's h; Adam's m, v and step
// count), as after a learning-rate drop.
func (o *Optimizer) ResetMomentum() error { return o.t.ResetMomentum() }

// Apply applies a Result made between steps, by the Validate of a
// [schedule.Validator] (a -val method, Plateau): α = res.NextLR, and the
// momentum zeroed when res.ResetMomentum. A drop there is not seen by
// AfterStep, which sets α after each step only: without Apply the next
// step runs at the old rate, and AfterStep refuses it.
func (o *Optimizer) Apply(res schedule.Result) error {
	if res.NextLR > 0 {
		if err := o.SetLR(res.NextLR); err != nil {
			return err
		}
	}
	if res.ResetMomentum {
		return o.ResetMomentum()
	}
	return nil
}

// SetValLoss gives the optimizer the validation loss at the current
// parameters, for a scheduler that asks for it ([Trainer.SetValLoss]):
// AfterStep calls f when the scheduler asks, between the step and the next.
func (o *Optimizer) SetValLoss(f func() (float64, error)) { o.t.SetValLoss(f) }

// LastResult is the scheduler's result of the last step seen by
// [Optimizer.AfterStep]: its Events hold the step's tests and drops.
func (o *Optimizer) LastResult() schedule.Result { return o.last }

// LastStats is what the last step seen by [Optimizer.AfterStep] returned to
// the host (GG is not computed).
func (o *Optimizer) LastStats() Stats { return o.stats }

// UpdateGraph implements optimizer.Interface: it builds one QHM (or Adam)
// step on the trainable variables of scope used by the graph, and stores the
// loss, ⟨x_{k+1},d_k⟩ and ‖d_k‖² for [Optimizer.AfterStep]. It panics on
// error, as GoMLX's graph-building functions do.
func (o *Optimizer) UpdateGraph(scope *model.Scope, g *Graph, loss *Node) {
	if scope.Store() != o.t.store {
		panic(errors.New("salsagomlx: Optimizer.UpdateGraph: the scope is not from the optimizer's store"))
	}
	if !loss.Shape().IsScalar() {
		panic(fmt.Errorf("salsagomlx: Optimizer.UpdateGraph: loss shape %s: must be a scalar", loss.Shape()))
	}
	var vs []*model.Variable
	for v := range scope.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		panic(errors.New("salsagomlx: Optimizer.UpdateGraph: the graph uses no trainable variable"))
	}
	xs := make([]*Node, len(vs))
	for i, v := range vs {
		xs[i] = v.NodeValue(g)
	}
	// The model's non-trainable variables (batch-norm statistics): read by
	// the graph so far, before the step's counters and the loop's metrics.
	o.t.loopStats = map[*model.Variable]bool{}
	for v := range o.t.store.IterVariables() {
		if !v.Trainable && v != o.t.rngVar && v.InUseByGraph(g) && !strings.HasPrefix(v.Path(), StateScope+"/") {
			o.t.loopStats[v] = true
		}
	}
	store := o.t.store
	if o.t.trainable == nil {
		o.t.trainable = vs // for ‖x‖² (Trainer.normSq); the search's graph sets it too
	}
	if o.search {
		o.searchGraph(scope, g, loss, vs, xs)
	} else {
		gs := o.t.clipAndDecay(vs, xs, Gradient(loss, xs...))
		fullLoss := Add(loss, ConvertDType(o.t.l2(vs, xs), loss.DType()))
		x1s, ds := o.t.direction(vs, xs, gs)
		x1d, d2 := perTensorDots(x1s, ds), perTensorDots(ds, ds)
		o.t.keepUnlessFinite(g, fullLoss, x1d, d2) // the step's outputs below are written either way
		store.VariableWithShape(stepLossVar, fullLoss.Shape(), Zeros).SetTrainable(false).SetNodeValue(fullLoss)
		store.VariableWithShape(stepX1DVar, x1d.Shape(), Zeros).SetTrainable(false).SetNodeValue(x1d)
		store.VariableWithShape(stepD2Var, d2.Shape(), Zeros).SetTrainable(false).SetNodeValue(d2)
	}
	cv := store.VariableWithShape(stepCount, shapes.Make(dtypes.Int64), Zeros).SetTrainable(false)
	cv.SetNodeValue(AddScalar(cv.NodeValue(g), 1))
	optimizer.IncrementGlobalStep(g, dtypes.Int64) // for train.Loop and Trainer.GlobalStep
	o.builds++
	o.builtSearch = o.search
}

// Clear implements optimizer.Interface: it deletes the direction's state,
// the per-step outputs and the scratch values, and keeps the learning rate.
func (o *Optimizer) Clear(_ *model.Scope) error {
	for _, p := range append(append(append([]string(nil), directionState...), stepScope), scratchScopes...) {
		if err := o.t.store.DeleteVariablesInScope(p); err != nil {
			return fmt.Errorf("salsagomlx: Optimizer.Clear: %w", err)
		}
	}
	o.count = 0
	o.trial, o.update = nil, nil
	return nil
}

// Attach drives the optimizer's learning rate from s in loop, whose trainer
// must have been built with o as its optimizer. It sets α = s.LR() now and at
// the start of every run of the loop, and registers an OnStep hook (at
// [HookPriority]) that calls [Optimizer.AfterStep] after every step.
//
// When the trainer was built by [NewTrainer], s may search (SSLS, SALSA):
// the hook then runs the line search on the step's mini-batch and makes the
// update. With a trainer from train.NewTrainer, s must not search, since
// optimizer.Interface.UpdateGraph does not see the inputs.
//
// Checkpoints: when the store holds a scheduler snapshot in
// [SchedulerParam] (a GoMLX checkpoint.Handler restored one) and s has made
// no step, Attach restores it into s first, so that a resumed program
// continues where the saved one stopped; the learning rate is then the
// restored scheduler's. From then on the parameter holds s, whose snapshot
// is written with every checkpoint.
//
// Drops between steps: the hook sets α after each step from its Result; a
// Result made between steps, by the Validate of a -val method or Plateau,
// is applied with [Optimizer.Apply].
//
// Step numbers: the k of [schedule.Result] and of its events counts the
// updates made, so it is the trainer's GlobalStep after the step, which is
// loop.LoopStep+1 while the OnStep hooks run.
func (o *Optimizer) Attach(loop *train.Loop, s schedule.Scheduler) error {
	if loop == nil || s == nil {
		return errors.New("salsagomlx: Attach: loop and scheduler must not be nil")
	}
	if o.sched != nil {
		return fmt.Errorf("salsagomlx: Attach: the optimizer is already driven by scheduler %s", o.sched.Name())
	}
	if loop.Trainer.Store() != o.t.store {
		return errors.New("salsagomlx: Attach: the loop's trainer uses another store than the optimizer")
	}
	if o.trainer != nil && loop.Trainer != o.trainer {
		return errors.New("salsagomlx: Attach: the loop's trainer is not the one NewTrainer built with this optimizer")
	}
	if err := o.restoreScheduler(s); err != nil {
		return err
	}
	if err := o.start(s); err != nil {
		return err
	}
	o.trainer = loop.Trainer
	o.sched = s
	o.t.store.SetParam(SchedulerParam, schedulerState{s})
	loop.OnStart("salsagomlx", HookPriority, func(*train.Loop, train.Dataset) error { return o.start(s) })
	loop.OnStep("salsagomlx", HookPriority, func(*train.Loop, []*tensors.Tensor) error {
		_, err := o.AfterStep(s)
		return err
	})
	return nil
}

// start checks that s can drive this optimizer, sets α = s.LR(), chooses
// the kind of train graph the next step needs and resynchronises the step
// counter with the store (which a checkpoint may have restored).
func (o *Optimizer) start(s schedule.Scheduler) error {
	if err := o.canSearch(s); err != nil {
		return err
	}
	// Write the variable even if the host copy agrees: a checkpoint may have
	// loaded another value.
	old := o.t.lr
	o.t.lr = math.NaN()
	if err := o.t.SetLR(s.LR()); err != nil {
		o.t.lr = old
		return err
	}
	o.setMode(s.Searching())
	o.count = -1 // not known until the counter variable exists
	if v := o.t.store.GetVariable(stepCount); v != nil {
		c, err := readSum(v)
		if err != nil {
			return err
		}
		o.count = int64(c)
	}
	return nil
}

// setMode makes the next train graph a searching one or a plain one,
// dropping the trainer's compiled graphs when they were built for the other.
func (o *Optimizer) setMode(search bool) {
	o.search = search
	if o.builds > 0 && o.builtSearch != search && o.trainer != nil {
		o.trainer.ResetComputationGraphs()
	}
}

// canSearch rejects a searching s when the optimizer has no model to run
// the trials with.
func (o *Optimizer) canSearch(s schedule.Scheduler) error {
	if schedule.Averages(s) {
		return fmt.Errorf("salsagomlx: scheduler %s averages the decay's iterates and picks the average or the last "+
			"iterate on a validation split at the end (TailConfig.Average, on in salsa-probe), which the Optimizer "+
			"does not do: use salsagomlx.Trainer, or salsa-budget without Average", s.Name())
	}
	if s.Searching() && o.modelFn == nil {
		return fmt.Errorf("salsagomlx: scheduler %s runs a line search at step %d: SSLS and SALSA (whose warmup "+
			"is SSLS) need trial losses on the step's mini-batch, which optimizer.Interface.UpdateGraph cannot "+
			"compute since it does not see the inputs: build the train.Trainer with salsagomlx.NewTrainer, "+
			"or use salsagomlx.Trainer", s.Name(), s.Step()+1)
	}
	if err := o.t.checkVal(s); err != nil {
		return err
	}
	return o.t.checkAlong(s)
}

// AfterStep closes with s the step the trainer has just made: it reads the
// loss (and for a searching step ‖g‖²) from the store and calls s.Begin;
// for a searching step it evaluates the trials s asks for and makes the
// update at the rate s chose, otherwise it checks that s asks for the
// learning rate the step used; then it calls s.End, copies the trainable
// variables as a candidate (under "/salsa/candidate"), keeps it (under
// "/salsa/kept"), puts the kept copy back, deletes the copies and zeroes
// the momentum when s asks for it (Result.Save, Confirm, Rollback,
// Release, ResetMomentum) and sets α = Result.NextLR for the next step.
// [Optimizer.Attach] calls it after every step of a train.Loop; call it
// yourself after each Trainer.TrainStep in a hand-written loop (after
// SetLR(s.LR()) before the first step).
//
// A plain step has made its update when AfterStep runs, unless its loss,
// ⟨x⁺,d⟩ or ‖d‖² was not finite: then the step wrote back none of the
// variables it changed (the model's, batch-norm statistics included, the
// direction's state, the RNG), only its outputs and counters, and after s
// rejects the loss both are as before the step. It is an error for a step
// to run without AfterStep.
func (o *Optimizer) AfterStep(s schedule.Scheduler) (schedule.Result, error) {
	if err := o.canSearch(s); err != nil {
		return schedule.Result{}, err
	}
	if o.builds > 0 && o.builtSearch != s.Searching() {
		return schedule.Result{}, fmt.Errorf("salsagomlx: AfterStep: scheduler %s searching = %v, the step's graph was built for %v "+
			"(drive the optimizer with one scheduler, through Attach)", s.Name(), s.Searching(), o.builtSearch)
	}
	v := o.t.store.GetVariable(stepCount)
	if v == nil {
		return schedule.Result{}, fmt.Errorf("salsagomlx: no variable %s: no step has run with this Optimizer "+
			"(is it the trainer's optimizer?)", stepCount)
	}
	c, err := readSum(v)
	if err != nil {
		return schedule.Result{}, err
	}
	count, prev := int64(c), o.count
	o.count = count
	if prev >= 0 && count != prev+1 {
		return schedule.Result{}, fmt.Errorf("salsagomlx: AfterStep: %d optimizer steps ran since the last call, want 1", count-prev)
	}
	var res schedule.Result
	var st Stats
	if o.builtSearch {
		res, st, err = o.searchStep(s)
	} else {
		res, st, err = o.plainStep(s)
	}
	if err != nil {
		return res, err
	}
	if err := o.t.SetLR(res.NextLR); err != nil {
		return res, err
	}
	o.setMode(s.Searching())
	o.excludeScratch()
	o.last, o.stats = res, st
	return res, nil
}

// plainStep closes a step whose update the train graph made.
func (o *Optimizer) plainStep(s schedule.Scheduler) (schedule.Result, Stats, error) {
	vals, err := o.readVars(stepLossVar, stepX1DVar, stepD2Var)
	if err != nil {
		return schedule.Result{}, Stats{}, err
	}
	st := Stats{Loss: vals[0], X1D: vals[1], D2: vals[2]}
	req, err := s.Begin(st.Loss, 0)
	if err != nil {
		s.Abort()
		return schedule.Result{}, st, err
	}
	if req.Eval || req.LR != o.t.lr {
		s.Abort()
		return schedule.Result{}, st, fmt.Errorf("salsagomlx: scheduler %s asked for lr %v (eval %v), the step used %v",
			s.Name(), req.LR, req.Eval, o.t.lr)
	}
	res, err := o.t.end(s, &st)
	return res, st, err
}

// readVars reads the sums of the values of the variables at paths.
func (o *Optimizer) readVars(paths ...string) ([]float64, error) {
	vals := make([]float64, len(paths))
	for i, p := range paths {
		v := o.t.store.GetVariable(p)
		if v == nil {
			return nil, fmt.Errorf("salsagomlx: no variable %s: no step has run with this Optimizer "+
				"(is it the trainer's optimizer?)", p)
		}
		var err error
		if vals[i], err = readSum(v); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// readSum adds up the elements of a variable's value in float64, in order,
// without freeing the value.
func readSum(v *model.Variable) (float64, error) {
	val, err := v.Value()
	if err != nil {
		return 0, fmt.Errorf("salsagomlx: reading %s: %w", v.Path(), err)
	}
	s, err := flatSum(val)
	if err != nil {
		return 0, fmt.Errorf("salsagomlx: reading %s: %w", v.Path(), err)
	}
	return s, nil
}

// flatSum adds the values of a float32, float64 or int64 tensor in float64.
func flatSum(val *tensors.Tensor) (float64, error) {
	var s float64
	var err error
	switch val.DType() {
	case dtypes.Float32:
		err = tensors.ConstFlatData(val, func(f []float32) {
			for _, x := range f {
				s += float64(x)
			}
		})
	case dtypes.Float64:
		err = tensors.ConstFlatData(val, func(f []float64) {
			for _, x := range f {
				s += x
			}
		})
	case dtypes.Int64:
		err = tensors.ConstFlatData(val, func(f []int64) {
			for _, x := range f {
				s += float64(x)
			}
		})
	default:
		return 0, fmt.Errorf("dtype %s: must be Float32, Float64 or Int64", val.DType())
	}
	return s, err
}
