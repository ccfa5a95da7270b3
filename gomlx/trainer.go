// Package salsagomlx drives a GoMLX model with the learning-rate schedulers
// of package schedule (SASA+, SSLS, SALSA and their baselines).
//
// A [Trainer] owns the direction (statopt's qhm_update, or Adam) as graph ops,
// with its state in non-trainable variables under the scope "/salsa" (or,
// with [Host], one of package direction's learning-rate-free and
// schedule-free methods run on the host between the gradient graph and the
// next step, evaluated where its method says: [Trainer.BeginEval]), and the
// learning rate α as a scalar variable set from the host between steps, so a
// change of α never recompiles. Each step returns to the host what the
// scheduler protocol needs: the loss f_ξk(x_k) + 0.5·wd·‖x_k‖², ⟨g_k,s_k⟩ for
// the line search along s_k (g_k, statopt's ls_dir='g'; or d_k with
// [Config.SearchAlongD]), and after the update ⟨x_{k+1},d_k⟩ and ‖d_k‖² for
// SASA+'s Δ_k.
//
// The line search needs one loss function of x on the step's mini-batch:
// the loss at x_k and every trial f(x_k − η·g) are computed in training
// mode, with the same batch statistics rule (batch norm normalizes with the
// batch's own statistics), the same dropout mask (the store's RNG state is
// restored for each trial) and the same carried state of a recurrent model.
// Trials change nothing: batch-norm running statistics, the RNG and the
// carried state are those the gradient phase left.
//
// A [Model] is a classifier: logits [batch, classes] from an input batch. A
// [Recurrent] model (a language model, say) maps tokens [batch, T] and a
// state to logits [batch, T, classes] and the next state; the [Trainer]
// carries that state from one batch to the next and [Trainer.ResetState]
// zeroes it (at the start of an epoch).
//
// An [Optimizer] is the same direction as a GoMLX optimizer.Interface, for a
// train.Loop driven by a scheduler: with GoMLX's train.NewTrainer, one that
// runs no line search (SASA+ and the baselines); with this package's
// [NewTrainer], any (SSLS and SALSA search on the step's batch); see
// [Optimizer.Attach].
//
// All graphs are built with the store in training mode: the Go backend embeds
// variables as constants in non-training graphs, which would freeze them.
// Evaluation binds the variables as parameters first, then builds the model
// in eval mode.
package salsagomlx

import (
	"errors"
	"fmt"
	"math"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/schedule"
)

// Model builds the logits [batch, classes] of a classifier from its input
// batch x. It creates its variables under scope; every trainable variable
// it uses is optimised.
type Model func(scope *model.Scope, x *Node) *Node

// Recurrent is a sequence model whose state is carried from one batch to the
// next (truncated back-propagation through time), such as models.LSTM.
type Recurrent interface {
	// Forward returns the logits [batch, T, classes] for the tokens x
	// [batch, T] from state, and the state after the last token. No
	// gradient may flow into the incoming state.
	Forward(scope *model.Scope, x, state *Node) (logits, next *Node)
	// StateShape is the shape of the state for a batch of the given size;
	// a state starts at zero.
	StateShape(batch int) shapes.Shape
}

// StateScope is the scope of the trainer's own variables.
const StateScope = "/salsa"

// Trainer trains a [Model] or a [Recurrent] model with the QHM or Adam
// direction and a host-set learning rate.
type Trainer struct {
	backend compute.Backend
	store   *model.Store
	modelFn Model     // a classifier, or nil
	rec     Recurrent // a recurrent model, or nil
	cfg     Config
	lrVar   *model.Variable
	lr      float64         // host copy of the value in lrVar
	rngVar  *model.Variable // the store's RNG state

	plain  *model.Exec // fused step: loss only
	stats  *model.Exec // fused step: loss, ⟨x⁺,d⟩, ‖d‖² per tensor
	grad   *model.Exec // phase 1: loss, ⟨g,s⟩ per tensor; g (and s) kept in variables
	trial  *model.Exec // f(x − η·s) + L2 on a batch, nothing changed
	update *model.Exec // phase 2: x ← x − α·d from the kept g; ⟨x⁺,d⟩, ‖d‖²
	eval   *model.Exec // per-example cross-entropy and argmax, eval mode
	// refresh is a training-mode forward pass that keeps the batch-norm
	// running statistics only (BeginEval, Host direction); built on use.
	refresh *model.Exec
	host    hostState // the Host direction
	avg     averageState

	trainable []*model.Variable // in creation order, set by the first graph
	// loopStats: in a train.Loop, the non-trainable variables its step
	// graph reads outside the trainer's scope (batch-norm statistics,
	// which the model keeps at the scope the loop gives it, not /model):
	// a rollback puts them back with the parameters.
	loopStats map[*model.Variable]bool

	valLoss func() (float64, error) // SetValLoss
}

// SetValLoss gives the Trainer the validation loss at the current
// parameters, for a scheduler that asks for it after an update
// ([schedule.Result.NeedVal]: salsa-probe with
// [schedule.TailConfig.ProbeVal]). f evaluates the model on a validation
// set, in eval mode (with [Trainer.Evaluate], say), and must not change the
// parameters. [Trainer.Run] and [Optimizer.AfterStep] call it when the
// scheduler asks, and refuse such a scheduler without it; nil removes it.
func (t *Trainer) SetValLoss(f func() (float64, error)) { t.valLoss = f }

// checkVal refuses a scheduler that asks for validation losses when the
// Trainer has no way to evaluate one.
func (t *Trainer) checkVal(s schedule.Scheduler) error {
	if schedule.AsksVal(s) && t.valLoss == nil {
		return fmt.Errorf("salsagomlx: scheduler %s asks for the validation loss after some steps (TailConfig.ProbeVal): "+
			"give the Trainer a way to evaluate it with SetValLoss", s.Name())
	}
	if schedule.Averages(s) && t.cfg.Direction == Host {
		return fmt.Errorf("salsagomlx: scheduler %s averages the decay's iterates (TailConfig.Average), "+
			"and the Host direction evaluates at its own point", s.Name())
	}
	if rb, ok := s.(interface{ RollsBack() bool }); ok && rb.RollsBack() && t.cfg.Direction == Host {
		// refused before the step, not at the first Save, when s has
		// already moved on
		return fmt.Errorf("salsagomlx: scheduler %s rolls the parameters back (TailConfig.ProbeRollback), "+
			"and the Host direction's own state (the averages) cannot be rolled back", s.Name())
	}
	return nil
}

// New returns a Trainer for the classifier modelFn, whose variables live in
// store under "/model".
func New(backend compute.Backend, store *model.Store, modelFn Model, cfg Config) (*Trainer, error) {
	if modelFn == nil {
		return nil, errors.New("salsagomlx: modelFn must not be nil")
	}
	return newTrainer(backend, store, modelFn, nil, cfg)
}

// NewRecurrent returns a Trainer for the recurrent model m, whose variables
// live in store under "/model" and whose carried state is the variable
// "/salsa/state". It trains on batches of one size.
func NewRecurrent(backend compute.Backend, store *model.Store, m Recurrent, cfg Config) (*Trainer, error) {
	if m == nil {
		return nil, errors.New("salsagomlx: the recurrent model must not be nil")
	}
	return newTrainer(backend, store, nil, m, cfg)
}

func newTrainer(backend compute.Backend, store *model.Store, modelFn Model, rec Recurrent, cfg Config) (*Trainer, error) {
	if backend == nil || store == nil {
		return nil, errors.New("salsagomlx: backend and store must not be nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := &Trainer{backend: backend, store: store, modelFn: modelFn, rec: rec, cfg: cfg, lr: cfg.LR}
	var err error
	if t.lrVar, err = lrVariable(store, cfg.LR); err != nil {
		return nil, err
	}
	if t.rngVar, err = rngVariable(store); err != nil {
		return nil, err
	}
	if t.plain, err = model.NewExec(backend, store, func(s *model.Scope, x, y *Node) []*Node {
		return t.fusedGraph(s, x, y, false)
	}); err != nil {
		return nil, err
	}
	if t.stats, err = model.NewExec(backend, store, func(s *model.Scope, x, y *Node) []*Node {
		return t.fusedGraph(s, x, y, true)
	}); err != nil {
		return nil, err
	}
	if t.grad, err = model.NewExec(backend, store, t.gradGraph); err != nil {
		return nil, err
	}
	if t.trial, err = model.NewExec(backend, store, t.trialGraph); err != nil {
		return nil, err
	}
	if t.update, err = model.NewExec(backend, store, t.updateGraph); err != nil {
		return nil, err
	}
	if rec != nil {
		t.eval, err = model.NewExec(backend, store, t.evalSeqGraph)
	} else {
		t.eval, err = model.NewExec(backend, store, t.evalGraph)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// lrVariable returns the non-trainable /salsa/lr variable set to lr.
// store.CreateVariable returns an existing variable unchanged (a reused or
// restored store), so its value is set explicitly then.
func lrVariable(store *model.Store, lr float64) (*model.Variable, error) {
	existing := store.GetVariable(StateScope + "/lr")
	v, err := store.CreateVariable(StateScope+"/lr", tensors.FromScalar(float32(lr)))
	if err != nil {
		return nil, fmt.Errorf("salsagomlx: %w", err)
	}
	v.SetTrainable(false)
	if existing != nil {
		if err := v.SetValue(tensors.FromScalar(float32(lr))); err != nil {
			return nil, fmt.Errorf("salsagomlx: %w", err)
		}
	}
	return v, nil
}

// rngVariable returns the store's RNG state variable, giving it a random
// state (store.ResetRNGState) if it has none yet: seed the store with
// SetRNGStateFromSeed before New for a reproducible run.
func rngVariable(store *model.Store) (*model.Variable, error) {
	if v := store.GetVariable(rngPath); v == nil || !v.HasValue() {
		if err := store.ResetRNGState(); err != nil {
			return nil, fmt.Errorf("salsagomlx: %w", err)
		}
	}
	v := store.GetVariable(rngPath)
	if v == nil {
		return nil, fmt.Errorf("salsagomlx: the store has no RNG state variable %s", rngPath)
	}
	return v, nil
}

// LR is the learning rate in the trainer's variable: the one the last step
// used or SetLR set. Run sets it from the scheduler at each step, so after a
// step that dropped the rate it is the old one until the next Run; the
// scheduler's LR is the rate the next update uses.
func (t *Trainer) LR() float64 { return t.lr }

// SetLR sets α for the next updates; it changes a variable, not the graph.
func (t *Trainer) SetLR(lr float64) error {
	if err := checkLR("lr", lr); err != nil {
		return err
	}
	if lr == t.lr {
		return nil
	}
	if err := t.lrVar.SetValue(tensors.FromScalar(float32(lr))); err != nil {
		return err
	}
	t.lr = lr
	return nil
}

// checkLR checks a learning rate for the float32 variable that holds it:
// finite, > 0, and neither overflowing float32 nor rounding to 0 there.
func checkLR(field string, lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("salsagomlx: %s = %v: must be finite and > 0", field, lr)
	}
	if f := float32(lr); f == 0 || math.IsInf(float64(f), 0) {
		return fmt.Errorf("salsagomlx: %s = %v: outside float32's range, where the learning rate is kept (%v to %v)",
			field, lr, math.SmallestNonzeroFloat32, math.MaxFloat32)
	}
	return nil
}

// Config returns the trainer's configuration.
func (t *Trainer) Config() Config { return t.cfg }

// Store is the store holding the model's and the trainer's variables.
func (t *Trainer) Store() *model.Store { return t.store }

// directionState lists the scopes of the direction's state: QHM's h, Adam's
// m, v and step count t.
var directionState = []string{StateScope + "/h", StateScope + "/m", StateScope + "/v", adamStepPath}

const adamStepPath = StateScope + "/adam_t"

// ResetMomentum zeroes the direction's state, as after a learning-rate drop:
// QHM's h; Adam's m, v and its step count; a Host direction's state (its
// Reset).
func (t *Trainer) ResetMomentum() error {
	if t.host.dir != nil {
		// The average is the evaluation point, not momentum: it is kept.
		t.host.dir.Reset()
		t.host.gen++
	}
	for _, sc := range directionState {
		for v := range t.store.Scope(sc).IterVariables() {
			if err := v.SetValue(tensors.FromShape(v.Shape())); err != nil {
				return err
			}
		}
	}
	return nil
}

// ResetState zeroes the carried state of a recurrent model, as at the start
// of an epoch. It does nothing for a classifier or before the first step.
func (t *Trainer) ResetState() error {
	if v := t.store.GetVariable(statePath); v != nil {
		return v.SetValue(tensors.FromShape(v.Shape()))
	}
	return nil
}

// ZeroState is a zero state of a recurrent model for a batch of n
// sequences, to start [Trainer.EvaluateSequenceSums] from.
func (t *Trainer) ZeroState(n int) (*tensors.Tensor, error) {
	if t.rec == nil {
		return nil, errors.New("salsagomlx: ZeroState: the model is not recurrent")
	}
	return tensors.FromShape(t.rec.StateShape(n)), nil
}

// ---- host side ----

// scalar reads a scalar result as float64 (see [sum]).
func scalar(tt *tensors.Tensor) float64 {
	return sum(tt)
}

// sum adds the per-tensor values in float64, in parameter order. The
// graphs compute them in the model's dtype: float32 or float64.
func sum(tt *tensors.Tensor) float64 {
	if dt := tt.DType(); dt != dtypes.Float32 && dt != dtypes.Float64 {
		panic(fmt.Errorf("salsagomlx: a step's statistics are %s: the model's parameters and loss must be float32 or float64", dt))
	}
	s, err := flatSum(tt)
	if err != nil {
		panic(fmt.Errorf("salsagomlx: a step's statistics: %w", err))
	}
	tt.FinalizeAll()
	return s
}

// Step makes one plain update x ← x − α·d on the batch (x, labels) and
// returns the loss at x_k, as an SGD/QHM training loop would.
func (t *Trainer) Step(x, labels *tensors.Tensor) (loss float64, err error) {
	if t.cfg.Direction == Host {
		st, err := t.StepStats(x, labels)
		return st.Loss, err
	}
	out, err := call("step", t.plain, x, labels)
	if err != nil {
		return 0, err
	}
	return scalar(out[0]), nil
}

// Stats holds what one step returns to the host.
type Stats struct {
	Loss float64 // f_ξk(x_k) + 0.5·wd·‖x_k‖²
	GG   float64 // ⟨g_k, s_k⟩ (‖g_k‖² along g); only from [Trainer.Grad]
	X1D  float64 // ⟨x_{k+1}, d_k⟩
	D2   float64 // ‖d_k‖²
	// X2 is ‖x_{k+1}‖², measured (HasX2) only at the steps a
	// schedule.NormAsker asks for it.
	X2    float64
	HasX2 bool
}

// StepStats is [Trainer.Step] that also returns ⟨x_{k+1},d_k⟩ and ‖d_k‖².
func (t *Trainer) StepStats(x, labels *tensors.Tensor) (Stats, error) {
	if t.cfg.Direction == Host {
		// Two phases: the gradient in the graph, the direction on the host.
		loss, _, err := t.Grad(x, labels)
		if err != nil {
			return Stats{Loss: loss}, err
		}
		x1d, d2, err := t.hostUpdate()
		return Stats{Loss: loss, X1D: x1d, D2: d2}, err
	}
	out, err := call("step", t.stats, x, labels)
	if err != nil {
		return Stats{}, err
	}
	return Stats{Loss: scalar(out[0]), X1D: sum(out[1]), D2: sum(out[2])}, nil
}

// Grad computes the loss and g_k on the batch in training mode and keeps
// g_k, the RNG state and the recurrent state the model started from for
// [Trainer.Trial] and [Trainer.Update]; x is not changed. Batch-norm
// running statistics, the RNG and the carried state advance as in a
// training step. gs is ⟨g_k, s_k⟩ with s_k the search direction: ‖g_k‖², or
// ⟨g_k, d_k⟩ with [Config.SearchAlongD].
func (t *Trainer) Grad(x, labels *tensors.Tensor) (loss, gs float64, err error) {
	if t.host.inEval {
		return 0, 0, errors.New("salsagomlx: a training step between BeginEval and EndEval")
	}
	t.host.gen++
	out, err := call("grad", t.grad, x, labels)
	if err != nil {
		return 0, 0, err
	}
	return scalar(out[0]), sum(out[1]), nil
}

// Trial returns f_ξ(x − η·s) + L2 on the batch with s (g, or d_k with
// [Config.SearchAlongD]) from the last [Trainer.Grad]: the same function of
// x as the loss Grad returned (training mode, same dropout mask, same
// recurrent state), so that Trial at η = 0 is that loss. It changes no variable.
func (t *Trainer) Trial(x, labels *tensors.Tensor, eta float64) (float64, error) {
	out, err := call("trial", t.trial, x, labels, float32(eta))
	if err != nil {
		return 0, err
	}
	return scalar(out[0]), nil
}

// Update makes x ← x − α·d from the g of the last [Trainer.Grad] and returns
// ⟨x_{k+1},d_k⟩ and ‖d_k‖².
func (t *Trainer) Update() (x1d, d2 float64, err error) {
	if t.cfg.Direction == Host {
		return t.hostUpdate()
	}
	out, err := call("update", t.update)
	if err != nil {
		return 0, 0, err
	}
	return sum(out[0]), sum(out[1]), nil
}

// Run makes one training step on the batch driven by s, through the protocol
// of package schedule: Begin, Trial while asked, the update, End. It copies
// the parameters, keeps the copy, puts it back, deletes the copies and
// resets the momentum when s asks for it (Result.Save, Confirm, Rollback,
// Release, ResetMomentum), and returns the step's [Stats] (GG is set when
// s searched).
//
// On an error after Begin, Run calls s.Abort() and still returns the loss it
// computed, so that the caller can tell a non-finite loss (which s rejects
// at Begin) from other failures. When s does not search, the update is made
// in the same graph as the loss, before Begin. A step whose loss or
// gradient is not finite writes no variable back, in either graph (the
// parameters, the direction's state, batch-norm statistics, a recurrent
// state, the RNG), so after s rejects it the trainer is as before the step
// and the next batch can follow. After another error the parameters may
// have moved, and only a snapshot ([Trainer.MarshalBinary]) brings them
// back.
func (t *Trainer) Run(s schedule.Scheduler, x, labels *tensors.Tensor) (schedule.Result, Stats, error) {
	if err := t.checkVal(s); err != nil {
		return schedule.Result{}, Stats{}, err
	}
	if !s.Searching() && t.cfg.Direction != Host {
		// The learning rate is known before the step: one fused graph.
		if err := t.SetLR(s.LR()); err != nil {
			return schedule.Result{}, Stats{}, err
		}
		st, err := t.StepStats(x, labels)
		if err != nil {
			return schedule.Result{}, Stats{}, err
		}
		req, err := s.Begin(st.Loss, 0)
		if err != nil {
			s.Abort()
			return schedule.Result{}, st, err
		}
		if req.Eval || req.LR != t.lr {
			s.Abort()
			return schedule.Result{}, st, fmt.Errorf("salsagomlx: scheduler %s asked for lr %v (eval %v) after announcing %v",
				s.Name(), req.LR, req.Eval, t.lr)
		}
		res, err := t.end(s, &st)
		return res, st, err
	}
	var st Stats
	if err := t.checkAlong(s); err != nil {
		return schedule.Result{}, Stats{}, err
	}
	var err error
	if st.Loss, st.GG, err = t.Grad(x, labels); err != nil {
		return schedule.Result{}, Stats{}, err
	}
	req, err := s.Begin(st.Loss, st.GG)
	for err == nil && req.Eval {
		var f float64
		if f, err = t.Trial(x, labels, req.Eta); err == nil {
			req, err = s.Trial(f)
		}
	}
	if err == nil {
		err = t.SetLR(req.LR)
	}
	if err == nil {
		st.X1D, st.D2, err = t.Update()
	}
	if err != nil {
		s.Abort()
		return schedule.Result{}, st, err
	}
	res, err := t.end(s, &st)
	return res, st, err
}

// end closes the step of st with s.End (calling s.Abort if it fails),
// reports the validation loss when s asks for it, keeps or puts back the
// parameters and resets the momentum when asked. It sets st.X2 when s asks
// for ‖x_{k+1}‖².
func (t *Trainer) end(s schedule.Scheduler, st *Stats) (schedule.Result, error) {
	obs := schedule.Observation{X1D: st.X1D, D2: st.D2}
	if schedule.AsksNorm(s) {
		// ‖x_{k+1}‖², read on the host only for a scheduler that asks
		x2, err := t.normSq()
		if err != nil {
			s.Abort()
			return schedule.Result{}, err
		}
		obs.X2, st.X2, st.HasX2 = x2, x2, true
	}
	res, err := s.End(obs)
	if err != nil {
		s.Abort()
		return res, err
	}
	if res, err = schedule.AnswerVal(s, res, t.valLoss); err != nil {
		return res, fmt.Errorf("salsagomlx: %w (Trainer.SetValLoss gives the validation loss)", err)
	}
	if err := t.keepOrRollback(res); err != nil {
		return res, err
	}
	if res.Average && res.Rollback {
		// the average starts again at the parameters put back
		if err := t.restartAverage(); err != nil {
			return res, err
		}
	}
	if res.Average {
		if err := t.foldAverage(res.Step); err != nil {
			return res, err
		}
	}
	if res.ResetMomentum {
		if err := t.ResetMomentum(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Evaluate returns the mean softmax cross-entropy (without the L2 term) and
// the accuracy (the fraction of examples whose largest logit is the label's)
// of a classifier on (x, labels), in eval mode; x is not changed. The sums
// are made in float64 on the host, so that the means over several calls on
// chunks of a set are exact up to float32 rounding of each example's loss.
func (t *Trainer) Evaluate(x, labels *tensors.Tensor) (loss, acc float64, err error) {
	lossSum, correct, n, err := t.EvaluateSums(x, labels)
	if err != nil {
		return 0, 0, err
	}
	return lossSum / float64(n), float64(correct) / float64(n), nil
}

// EvaluateSums is [Trainer.Evaluate] returning the sum of the per-example
// losses, the number of correct predictions and the number of examples, to
// be added up over chunks of a set. Labels are [n] or [n, 1].
func (t *Trainer) EvaluateSums(x, labels *tensors.Tensor) (lossSum float64, correct, n int, err error) {
	if t.rec != nil {
		return 0, 0, 0, errors.New("salsagomlx: EvaluateSums: the model is recurrent: use EvaluateSequenceSums")
	}
	if err := checkClassLabels(labels); err != nil {
		return 0, 0, 0, err
	}
	out, err := call("eval", t.eval, x, labels)
	if err != nil {
		return 0, 0, 0, err
	}
	lossSum, correct, err = evalSums(out[0], out[1], labels)
	return lossSum, correct, labels.Shape().Size(), err
}

// EvaluateSequenceSums evaluates a recurrent model in eval mode on the
// tokens x [batch, T] with targets labels [batch, T], from state (zero at
// the start of a text: [Trainer.ZeroState]). It returns the sum of the
// per-token cross-entropies, the number of correct next-token predictions,
// the number of tokens, and the state to evaluate the next chunk from. The
// training state is not changed.
func (t *Trainer) EvaluateSequenceSums(x, labels, state *tensors.Tensor) (lossSum float64, correct, n int, next *tensors.Tensor, err error) {
	if t.rec == nil {
		return 0, 0, 0, nil, errors.New("salsagomlx: EvaluateSequenceSums: the model is not recurrent: use EvaluateSums")
	}
	if err := checkSeqLabels(labels); err != nil {
		return 0, 0, 0, nil, err
	}
	out, err := call("eval", t.eval, x, labels, state)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	lossSum, correct, err = evalSums(out[0], out[1], labels)
	return lossSum, correct, labels.Shape().Size(), out[2], err
}

// checkClassLabels checks a classifier's labels: [n] or [n, 1], n > 0.
func checkClassLabels(labels *tensors.Tensor) error {
	if r := labels.Rank(); (r != 1 && !(r == 2 && labels.Shape().Dim(1) == 1)) || labels.Shape().Dim(0) == 0 {
		return fmt.Errorf("salsagomlx: labels shape %s: must be [n] or [n, 1] with n > 0", labels.Shape())
	}
	return nil
}

// checkSeqLabels checks a recurrent model's targets: [batch, T], not empty.
func checkSeqLabels(labels *tensors.Tensor) error {
	if labels.Rank() != 2 || labels.Shape().Size() == 0 {
		return fmt.Errorf("salsagomlx: labels shape %s: must be [batch, T], not empty", labels.Shape())
	}
	return nil
}

// evalSums adds up the cross-entropies and counts the predictions equal to
// the labels, and frees ce and pred.
func evalSums(ce, pred, labels *tensors.Tensor) (lossSum float64, correct int, err error) {
	defer ce.FinalizeAll()
	defer pred.FinalizeAll()
	tensors.MustConstFlatData(ce, func(v []float32) {
		for _, x := range v {
			lossSum += float64(x)
		}
	})
	if labels.DType() != dtypes.Int32 {
		return 0, 0, fmt.Errorf("salsagomlx: labels dtype %s: must be Int32", labels.DType())
	}
	err = tensors.ConstFlatData(labels, func(y []int32) {
		tensors.MustConstFlatData(pred, func(p []int32) {
			for i, v := range p {
				if v == y[i] {
					correct++
				}
			}
		})
	})
	if err != nil {
		return 0, 0, fmt.Errorf("salsagomlx: labels: %w", err)
	}
	return lossSum, correct, nil
}

// checkAlong returns an error when s's line search is configured along
// another direction than Config.SearchAlongD evaluates: the scheduler
// would compare trial losses along one direction with ⟨g,s⟩ of another.
func (t *Trainer) checkAlong(s schedule.Scheduler) error {
	along, ok := searchAlong(s)
	if ok && (along == schedule.AlongD) != t.cfg.SearchAlongD {
		return fmt.Errorf("salsagomlx: scheduler %s searches along %v (SSLSConfig.SearchAlong) and Config.SearchAlongD is %v: "+
			"they must agree", s.Name(), along, t.cfg.SearchAlongD)
	}
	return nil
}

// searchAlong returns the line-search direction of the SSLS inside s, when
// s is or wraps one.
func searchAlong(s schedule.Scheduler) (schedule.Along, bool) {
	switch v := s.(type) {
	case *schedule.SSLS:
		return v.Config().SearchAlong, true
	case *schedule.SALSA:
		return v.Config().SSLS.SearchAlong, true
	case *schedule.Tail:
		return searchAlong(v.Inner())
	case *schedule.WithValidation:
		return searchAlong(v.Inner())
	}
	return 0, false
}
