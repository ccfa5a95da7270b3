// Package salsagomlx drives a GoMLX classifier with the learning-rate
// schedulers of package schedule (SASA+, SSLS, SALSA and their baselines).
//
// A [Trainer] owns the direction (statopt's qhm_update, or Adam) as graph ops,
// with its state in non-trainable variables under the scope "/salsa", and the
// learning rate α as a scalar variable set from the host between steps, so a
// change of α never recompiles. Each step returns to the host what the
// scheduler protocol needs: the loss f_ξk(x_k) + 0.5·wd·‖x_k‖², ⟨g_k,g_k⟩ for
// the line search along g (ls_dir='g'), and after the update ⟨x_{k+1},d_k⟩
// and ‖d_k‖² for SASA+'s Δ_k.
//
// An [Optimizer] is the same direction as a GoMLX optimizer.Interface, for an
// existing train.Trainer and train.Loop driven by a scheduler that runs no
// line search (SASA+ and the baselines); see [Optimizer.Attach].
//
// All graphs are built with the store in training mode: the Go backend embeds
// variables as constants in non-training graphs, which would freeze them. The
// line-search trials build the model in eval mode after the variables have
// been bound as parameters.
package salsagomlx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/nn"

	"github.com/salsaopt/salsa/schedule"
)

// Model builds the logits [batch, classes] of a classifier from its input
// [batch, features...]. It creates its variables under scope; every
// trainable variable it uses is optimised.
type Model func(scope *model.Scope, x *Node) *Node

// Direction selects the update direction d_k of a [Trainer].
type Direction int

const (
	// QHM is statopt's qhm_update: h ← βh + (1−β)g, d = (1−ν)g + νh.
	QHM Direction = iota
	// Adam is Kingma & Ba's direction with L2 in g (PyTorch's Adam with
	// weight_decay): m ← β1·m + (1−β1)g, v ← β2·v + (1−β2)g²,
	// d = m̂/(√v̂ + ε) with m̂ = m/(1−β1^t), v̂ = v/(1−β2^t).
	Adam
)

// String names the direction.
func (d Direction) String() string {
	switch d {
	case QHM:
		return "qhm"
	case Adam:
		return "adam"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// Config configures a [Trainer].
type Config struct {
	LR          float64   // α_0, the initial learning rate; > 0
	Direction   Direction // QHM (the zero value) or Adam
	Beta        float64   // QHM momentum β (statopt's momentum), in [0, 1)
	Nu          float64   // QHM ν (statopt's qhm_nu), in [0, 1]
	Beta1       float64   // Adam β1, in [0, 1)
	Beta2       float64   // Adam β2, in [0, 1)
	Eps         float64   // Adam ε, finite and > 0
	WeightDecay float64   // wd ≥ 0: L2 term 0.5·wd·‖x‖² in the loss, wd·x in g
}

func (c Config) validate() error {
	switch {
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("salsagomlx: LR = %v: must be finite and > 0", c.LR)
	case !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0):
		return fmt.Errorf("salsagomlx: WeightDecay = %v: must be finite and >= 0", c.WeightDecay)
	}
	switch c.Direction {
	case QHM:
		switch {
		case !(c.Beta >= 0 && c.Beta < 1):
			return fmt.Errorf("salsagomlx: Beta = %v: must be in [0, 1)", c.Beta)
		case !(c.Nu >= 0 && c.Nu <= 1):
			return fmt.Errorf("salsagomlx: Nu = %v: must be in [0, 1]", c.Nu)
		}
	case Adam:
		switch {
		case !(c.Beta1 >= 0 && c.Beta1 < 1):
			return fmt.Errorf("salsagomlx: Beta1 = %v: must be in [0, 1)", c.Beta1)
		case !(c.Beta2 >= 0 && c.Beta2 < 1):
			return fmt.Errorf("salsagomlx: Beta2 = %v: must be in [0, 1)", c.Beta2)
		case !(c.Eps > 0) || math.IsInf(c.Eps, 0):
			return fmt.Errorf("salsagomlx: Eps = %v: must be finite and > 0", c.Eps)
		}
	default:
		return fmt.Errorf("salsagomlx: Direction = %d: must be QHM (0) or Adam (1)", int(c.Direction))
	}
	return nil
}

// StateScope is the scope of the trainer's own variables.
const StateScope = "/salsa"

// Trainer trains a [Model] with the QHM direction and a host-set learning rate.
type Trainer struct {
	backend compute.Backend
	store   *model.Store
	modelFn Model
	cfg     Config
	lrVar   *model.Variable
	lr      float64 // host copy of the value in lrVar

	plain  *model.Exec // fused step: loss only
	stats  *model.Exec // fused step: loss, ⟨x⁺,d⟩, ‖d‖² per tensor
	grad   *model.Exec // phase 1: loss, ‖g‖² per tensor; g kept in variables
	trial  *model.Exec // f(x − η·g) + L2 on a batch, x unchanged
	update *model.Exec // phase 2: x ← x − α·d from the kept g; ⟨x⁺,d⟩, ‖d‖²
	eval   *model.Exec // per-example cross-entropy and argmax, eval mode

	trainable []*model.Variable // in creation order, set by the first graph
}

// New returns a Trainer for modelFn, whose variables live in store under
// "/model".
func New(backend compute.Backend, store *model.Store, modelFn Model, cfg Config) (*Trainer, error) {
	if backend == nil || store == nil || modelFn == nil {
		return nil, errors.New("salsagomlx: backend, store and modelFn must not be nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := &Trainer{backend: backend, store: store, modelFn: modelFn, cfg: cfg, lr: cfg.LR}
	var err error
	if t.lrVar, err = lrVariable(store, cfg.LR); err != nil {
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
	if t.eval, err = model.NewExec(backend, store, t.evalGraph); err != nil {
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

// LR is the learning rate the next update uses.
func (t *Trainer) LR() float64 { return t.lr }

// SetLR sets α for the next updates; it changes a variable, not the graph.
func (t *Trainer) SetLR(lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("salsagomlx: lr = %v: must be finite and > 0", lr)
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

// Config returns the trainer's configuration.
func (t *Trainer) Config() Config { return t.cfg }

// directionState lists the scopes of the direction's state: QHM's h, Adam's
// m, v and step count t.
var directionState = []string{StateScope + "/h", StateScope + "/m", StateScope + "/v", adamStepPath}

const adamStepPath = StateScope + "/adam_t"

// ResetMomentum zeroes the direction's state, as after a learning-rate drop:
// QHM's h; Adam's m, v and its step count.
func (t *Trainer) ResetMomentum() error {
	for _, sc := range directionState {
		for v := range t.store.Scope(sc).IterVariables() {
			if err := v.SetValue(tensors.FromShape(v.Shape())); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- graph building ----

// forward builds the mean softmax cross-entropy of the model on (x, y), with y
// the int labels [batch].
func (t *Trainer) forward(s *model.Scope, x, y *Node) *Node {
	ce, _ := t.crossEntropy(s, x, y)
	return ReduceAllMean(ce)
}

// crossEntropy builds the per-example softmax cross-entropy [batch] and the
// logits.
func (t *Trainer) crossEntropy(s *model.Scope, x, y *Node) (ce, logits *Node) {
	logits = t.modelFn(s.In("model"), x)
	if logits.Rank() != 2 {
		panic(fmt.Errorf("salsagomlx: logits shape %s: must be [batch, classes]", logits.Shape()))
	}
	logp := LogSoftmax(logits)
	onehot := OneHot(y, logits.Shape().Dim(1), logp.DType())
	return Neg(ReduceSum(Mul(onehot, logp), -1)), logits
}

// bindTrainable records the trainable variables the graph uses, in creation
// order, and checks that they are the same in every graph.
func (t *Trainer) bindTrainable(g *Graph) []*model.Variable {
	var vs []*model.Variable
	for v := range t.store.Scope("/model").IterVariables() {
		if v.Trainable && v.InUseByGraph(g) {
			vs = append(vs, v)
		}
	}
	if t.trainable == nil {
		t.trainable = vs
	} else if len(vs) != len(t.trainable) {
		panic(fmt.Errorf("salsagomlx: the model uses %d trainable variables, was %d", len(vs), len(t.trainable)))
	}
	return vs
}

// l2 is 0.5·wd·Σ‖x_i‖², accumulated in parameter order.
func (t *Trainer) l2(xs []*Node) *Node {
	g := xs[0].Graph()
	sum := ScalarZero(g, xs[0].DType())
	if t.cfg.WeightDecay == 0 {
		return sum
	}
	for _, x := range xs {
		sum = Add(sum, ReduceAllSum(Square(x)))
	}
	return MulScalar(sum, 0.5*t.cfg.WeightDecay)
}

// lossAndGrad returns f + L2 and g = ∇f + wd·x for each trainable variable.
func (t *Trainer) lossAndGrad(s *model.Scope, x, y *Node) (vs []*model.Variable, xs []*Node, loss *Node, gs []*Node) {
	g := x.Graph()
	t.store.SetTraining(g, true)
	f := t.forward(s, x, y)
	vs = t.bindTrainable(g)
	xs = make([]*Node, len(vs))
	for i, v := range vs {
		xs[i] = v.NodeValue(g)
	}
	gs = Gradient(f, xs...)
	if wd := t.cfg.WeightDecay; wd != 0 {
		for i := range gs {
			gs[i] = Add(gs[i], MulScalar(xs[i], wd))
		}
	}
	return vs, xs, Add(f, t.l2(xs)), gs
}

func (t *Trainer) stateVar(kind string, v *model.Variable) *model.Variable {
	return t.store.VariableWithShape(StateScope+"/"+kind+v.Path(), v.Shape(), Zeros).SetTrainable(false)
}

// direction builds d_k (QHM or Adam, see [Direction]), updates
// x ← x − α·d, and returns the updated x and d.
func (t *Trainer) direction(vs []*model.Variable, xs, gs []*Node) (x1s, ds []*Node) {
	g := gs[0].Graph()
	lr := t.lrVar.NodeValue(g)
	beta, nu := t.cfg.Beta, t.cfg.Nu
	x1s, ds = make([]*Node, len(vs)), make([]*Node, len(vs))
	var bc1, bc2 *Node // Adam's bias corrections 1−β1^t, 1−β2^t, in float64
	if t.cfg.Direction == Adam {
		tv := t.store.VariableWithShape(adamStepPath, shapes.Make(dtypes.Int64), Zeros).SetTrainable(false)
		step := AddScalar(tv.NodeValue(g), 1)
		tv.SetNodeValue(step)
		tf := ConvertDType(step, dtypes.Float64)
		bc1 = OneMinus(Pow(Scalar(g, dtypes.Float64, t.cfg.Beta1), tf))
		bc2 = OneMinus(Pow(Scalar(g, dtypes.Float64, t.cfg.Beta2), tf))
	}
	for i, v := range vs {
		d := gs[i]
		if t.cfg.Direction == Adam {
			d = t.adam(v, gs[i], bc1, bc2)
		} else if beta != 0 && nu != 0 {
			hv := t.stateVar("h", v)
			h := Add(MulScalar(hv.NodeValue(g), beta), MulScalar(gs[i], 1-beta))
			hv.SetNodeValue(h)
			if nu == 1 {
				d = h
			} else {
				d = Add(MulScalar(gs[i], 1-nu), MulScalar(h, nu))
			}
		}
		x1 := Sub(xs[i], Mul(ConvertDType(lr, d.DType()), d))
		v.SetNodeValue(x1)
		x1s[i], ds[i] = x1, d
	}
	return x1s, ds
}

// adam updates m and v of variable v from its gradient gr and returns
// d = (m/bc1)/(√v/√bc2 + ε), PyTorch's Adam step divided by α.
func (t *Trainer) adam(v *model.Variable, gr, bc1, bc2 *Node) *Node {
	g := gr.Graph()
	b1, b2 := t.cfg.Beta1, t.cfg.Beta2
	mv, vv := t.stateVar("m", v), t.stateVar("v", v)
	m := Add(MulScalar(mv.NodeValue(g), b1), MulScalar(gr, 1-b1))
	s := Add(MulScalar(vv.NodeValue(g), b2), MulScalar(Square(gr), 1-b2))
	mv.SetNodeValue(m)
	vv.SetNodeValue(s)
	dt := gr.DType()
	denom := AddScalar(Div(Sqrt(s), ConvertDType(Sqrt(bc2), dt)), t.cfg.Eps)
	return Div(Div(m, ConvertDType(bc1, dt)), denom)
}

// perTensorDots returns the vector [⟨a_i,b_i⟩]_i, one dot per tensor in the
// parameter dtype, for the host to sum in float64 as statopt does.
func perTensorDots(as, bs []*Node) *Node {
	dots := make([]*Node, len(as))
	for i := range as {
		dots[i] = ReduceAllSum(Mul(as[i], bs[i]))
	}
	return Stack(dots, 0)
}

func (t *Trainer) fusedGraph(s *model.Scope, x, y *Node, stats bool) []*Node {
	vs, xs, loss, gs := t.lossAndGrad(s, x, y)
	x1s, ds := t.direction(vs, xs, gs)
	if !stats {
		return []*Node{loss}
	}
	return []*Node{loss, perTensorDots(x1s, ds), perTensorDots(ds, ds)}
}

func (t *Trainer) gradGraph(s *model.Scope, x, y *Node) (*Node, *Node) {
	vs, _, loss, gs := t.lossAndGrad(s, x, y)
	for i, v := range vs {
		t.stateVar("g", v).SetNodeValue(gs[i])
	}
	return loss, perTensorDots(gs, gs)
}

func (t *Trainer) trialGraph(s *model.Scope, x, y, eta *Node) *Node {
	g := x.Graph()
	if t.trainable == nil {
		panic(errors.New("salsagomlx: trial before the first gradient step"))
	}
	// Bind every variable as a graph parameter while in training mode, then
	// evaluate the model in eval mode at x − η·g without changing x.
	t.store.SetTraining(g, true)
	params := make([]*Node, len(t.trainable))
	trialXs := make([]*Node, len(t.trainable))
	for i, v := range t.trainable {
		params[i] = v.NodeValue(g)
		gv := t.stateVar("g", v).NodeValue(g)
		trialXs[i] = Sub(params[i], Mul(ConvertDType(eta, gv.DType()), gv))
		v.SetNodeValue(trialXs[i])
	}
	for v := range t.store.Scope("/model").IterVariables() {
		v.NodeValue(g) // bind the non-trainable ones as parameters too
	}
	t.store.SetTraining(g, false)
	f := t.forward(s, x, y)
	for i, v := range t.trainable {
		v.SetNodeValue(params[i]) // unchanged: not an output of the graph
	}
	return Add(f, t.l2(trialXs))
}

func (t *Trainer) updateGraph(s *model.Scope, g *Graph) (*Node, *Node) {
	if t.trainable == nil {
		panic(errors.New("salsagomlx: update before the first gradient step"))
	}
	t.store.SetTraining(g, true)
	xs := make([]*Node, len(t.trainable))
	gs := make([]*Node, len(t.trainable))
	for i, v := range t.trainable {
		xs[i] = v.NodeValue(g)
		gs[i] = t.stateVar("g", v).NodeValue(g)
	}
	x1s, ds := t.direction(t.trainable, xs, gs)
	return perTensorDots(x1s, ds), perTensorDots(ds, ds)
}

// evalGraph returns the per-example cross-entropy (no L2 term) and the
// predicted class, in eval mode, x unchanged.
func (t *Trainer) evalGraph(s *model.Scope, x, y *Node) (*Node, *Node) {
	g := x.Graph()
	// As in trialGraph: bind the variables as parameters in training mode,
	// so that the Go backend does not embed their current values.
	t.store.SetTraining(g, true)
	for v := range t.store.Scope("/model").IterVariables() {
		v.NodeValue(g)
	}
	t.store.SetTraining(g, false)
	ce, logits := t.crossEntropy(s, x, y)
	return ce, ArgMax(logits, -1, dtypes.Int32)
}

// ---- host side ----

func scalar(tt *tensors.Tensor) float64 {
	v := float64(tensors.ToScalar[float32](tt))
	tt.FinalizeAll()
	return v
}

// sum adds the per-tensor values in float64, in parameter order.
func sum(tt *tensors.Tensor) float64 {
	var s float64
	tensors.MustConstFlatData(tt, func(flat []float32) {
		for _, v := range flat {
			s += float64(v)
		}
	})
	tt.FinalizeAll()
	return s
}

// Step makes one plain update x ← x − α·d on the batch (x, labels) and
// returns the loss at x_k, as an SGD/QHM training loop would.
func (t *Trainer) Step(x, labels *tensors.Tensor) (loss float64, err error) {
	out, err := t.plain.Call(x, labels)
	if err != nil {
		return 0, err
	}
	return scalar(out[0]), nil
}

// Stats holds what one step returns to the host.
type Stats struct {
	Loss float64 // f_ξk(x_k) + 0.5·wd·‖x_k‖²
	GG   float64 // ⟨g_k, g_k⟩; only from [Trainer.Grad]
	X1D  float64 // ⟨x_{k+1}, d_k⟩
	D2   float64 // ‖d_k‖²
}

// StepStats is [Trainer.Step] that also returns ⟨x_{k+1},d_k⟩ and ‖d_k‖².
func (t *Trainer) StepStats(x, labels *tensors.Tensor) (Stats, error) {
	out, err := t.stats.Call(x, labels)
	if err != nil {
		return Stats{}, err
	}
	return Stats{Loss: scalar(out[0]), X1D: sum(out[1]), D2: sum(out[2])}, nil
}

// Grad computes the loss and g_k on the batch and keeps g_k for
// [Trainer.Trial] and [Trainer.Update]; x is not changed.
func (t *Trainer) Grad(x, labels *tensors.Tensor) (loss, gg float64, err error) {
	out, err := t.grad.Call(x, labels)
	if err != nil {
		return 0, 0, err
	}
	return scalar(out[0]), sum(out[1]), nil
}

// Trial returns f_ξ(x − η·g) + L2 on the batch, in eval mode, with g from the
// last [Trainer.Grad]; x is not changed.
func (t *Trainer) Trial(x, labels *tensors.Tensor, eta float64) (float64, error) {
	out, err := t.trial.Call(x, labels, float32(eta))
	if err != nil {
		return 0, err
	}
	return scalar(out[0]), nil
}

// Update makes x ← x − α·d from the g of the last [Trainer.Grad] and returns
// ⟨x_{k+1},d_k⟩ and ‖d_k‖².
func (t *Trainer) Update() (x1d, d2 float64, err error) {
	out, err := t.update.Call()
	if err != nil {
		return 0, 0, err
	}
	return sum(out[0]), sum(out[1]), nil
}

// Run makes one training step on the batch driven by s, through the protocol
// of package schedule: Begin, Trial while asked, the update, End. It resets
// the momentum when s asks for it, and returns the step's [Stats] (GG is set
// when s searched).
//
// On an error after Begin, Run calls s.Abort() and still returns the loss it
// computed, so that the caller can tell a non-finite loss (which s rejects
// at Begin) from other failures. When s does not search, the update is made
// in the same graph as the loss, before Begin: after an error the
// parameters may have moved, and only a snapshot ([Trainer.MarshalBinary])
// brings them back.
func (t *Trainer) Run(s schedule.Scheduler, x, labels *tensors.Tensor) (schedule.Result, Stats, error) {
	if !s.Searching() {
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
		res, err := t.end(s, st.X1D, st.D2)
		return res, st, err
	}
	var st Stats
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
	res, err := t.end(s, st.X1D, st.D2)
	return res, st, err
}

// end closes the step with s.End (calling s.Abort if it fails) and resets
// the momentum when asked.
func (t *Trainer) end(s schedule.Scheduler, x1d, d2 float64) (schedule.Result, error) {
	res, err := s.End(schedule.Observation{X1D: x1d, D2: d2})
	if err != nil {
		s.Abort()
		return res, err
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
// of the model on (x, labels), in eval mode; x is not changed. The sums are
// made in float64 on the host, so that the means over several calls on
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
// be added up over chunks of a set.
func (t *Trainer) EvaluateSums(x, labels *tensors.Tensor) (lossSum float64, correct, n int, err error) {
	if labels.Rank() != 1 || labels.Shape().Dim(0) == 0 {
		return 0, 0, 0, fmt.Errorf("salsagomlx: labels shape %s: must be [n] with n > 0", labels.Shape())
	}
	out, err := t.eval.Call(x, labels)
	if err != nil {
		return 0, 0, 0, err
	}
	defer out[0].FinalizeAll()
	defer out[1].FinalizeAll()
	tensors.MustConstFlatData(out[0], func(ce []float32) {
		for _, v := range ce {
			lossSum += float64(v)
		}
	})
	err = tensors.ConstFlatData(labels, func(y []int32) {
		tensors.MustConstFlatData(out[1], func(pred []int32) {
			for i, p := range pred {
				if p == y[i] {
					correct++
				}
			}
		})
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("salsagomlx: labels: %w", err)
	}
	return lossSum, correct, out[1].Shape().Dim(0), nil
}

// Dense is a fully connected layer act(x·W + b) with W from the scope's
// initializer (GoMLX's default: He-normal, drawn from the store's RNG, see
// [MLP]) and zero b, for building [Model]s. It uses the backend's fused dense op (with
// its fused gradient) when there is one.
func Dense(scope *model.Scope, x *Node, out int, act ...activation.Type) *Node {
	in := x.Shape().Dim(-1)
	w := scope.VariableWithShape("weights", shapes.Make(x.DType(), in, out))
	b := scope.WithInitializer(Zeros).VariableWithShape("bias", shapes.Make(x.DType(), out))
	g := x.Graph()
	return nn.Dense(x, w.NodeValue(g), b.NodeValue(g), compute.DenseLayoutInputOutputs, act...)
}

// Logreg is softmax regression x·W + b on the flattened input, with W and b
// starting at zero. It uses an unfused MatMul: on the Go backend the fused
// dense op is ~2.5× slower for 784→10.
func Logreg(classes int) Model {
	return func(scope *model.Scope, x *Node) *Node {
		x = Reshape(x, x.Shape().Dim(0), -1)
		scope = scope.In("dense").WithInitializer(Zeros)
		w := scope.VariableWithShape("weights", shapes.Make(x.DType(), x.Shape().Dim(-1), classes))
		b := scope.VariableWithShape("bias", shapes.Make(x.DType(), classes))
		g := x.Graph()
		return Add(MatMul(x, w.NodeValue(g)), InsertAxes(b.NodeValue(g), 0))
	}
}

// MLP is a multilayer perceptron on the flattened input: ReLU layers of the
// given widths, then a linear layer to the classes (784-512-512-10 for
// MLP([]int{512, 512}, 10)). Its weights come from GoMLX's default
// initializer (He-normal, zero biases), drawn from the store's RNG when the
// first step runs: seed it with [model.Store.SetRNGStateFromSeed] before
// that for a reproducible run.
func MLP(hidden []int, classes int) Model {
	hidden = append([]int(nil), hidden...)
	return func(scope *model.Scope, x *Node) *Node {
		x = Reshape(x, x.Shape().Dim(0), -1)
		for i, h := range hidden {
			x = Dense(scope.In("dense%d", i), x, h, activation.TypeRelu)
		}
		return Dense(scope.In("dense%d", len(hidden)), x, classes)
	}
}

// ---- snapshots ----

const (
	snapshotMagic   = "salsagomlx\x00"
	snapshotVersion = 1
)

// snapshotVars lists the variables a snapshot holds, in store order: every
// variable under /model and the direction's state (not the learning rate,
// saved as a float64, nor the gradient kept between Grad and Update).
func (t *Trainer) snapshotVars() []*model.Variable {
	var vs []*model.Variable
	for v := range t.store.IterVariables() {
		if snapshotPath(v.Path()) {
			vs = append(vs, v)
		}
	}
	return vs
}

func snapshotPath(p string) bool {
	if strings.HasPrefix(p, "/model/") {
		return true
	}
	for _, sc := range directionState {
		if p == sc || strings.HasPrefix(p, sc+"/") {
			return true
		}
	}
	return false
}

// MarshalBinary writes a versioned snapshot of the trainer between steps:
// the direction kind, the learning rate, and the bytes of every variable
// under /model and of the direction's state (QHM's h; Adam's m, v, t).
// [Trainer.UnmarshalBinary] on a trainer built with the same model and
// Config restores it so that training continues bit for bit. The model's
// variables exist once a step (or Evaluate) has run; before that there is
// nothing to save and MarshalBinary returns an error.
func (t *Trainer) MarshalBinary() ([]byte, error) {
	vs := t.snapshotVars()
	nModel := 0
	for _, v := range vs {
		if strings.HasPrefix(v.Path(), "/model/") {
			nModel++
		}
	}
	if nModel == 0 {
		return nil, errors.New("salsagomlx: snapshot: the model has no variables yet (they are created by the first step)")
	}
	var b bytes.Buffer
	b.WriteString(snapshotMagic)
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	w(uint32(snapshotVersion))
	w(uint32(t.cfg.Direction))
	w(t.lr)
	w(uint32(len(vs)))
	for _, v := range vs {
		val, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("salsagomlx: snapshot of %s: %w", v.Path(), err)
		}
		sh := val.Shape()
		w(uint32(len(v.Path())))
		b.WriteString(v.Path())
		w(uint32(sh.DType))
		w(uint32(sh.Rank()))
		for _, d := range sh.Dimensions {
			w(uint64(d))
		}
		err = val.ConstBytes(func(data []byte) {
			w(uint64(len(data)))
			b.Write(data)
		})
		if err != nil {
			return nil, fmt.Errorf("salsagomlx: snapshot of %s: %w", v.Path(), err)
		}
	}
	return b.Bytes(), nil
}

// UnmarshalBinary restores a snapshot of [Trainer.MarshalBinary]. It checks
// the whole snapshot before changing anything: the version, the direction,
// and that each variable the trainer already has matches the snapshot's in
// dtype and shape. Variables the trainer has not created yet (a fresh
// trainer) are created with the snapshot's values.
func (t *Trainer) UnmarshalBinary(data []byte) error {
	r := bytes.NewReader(data)
	fail := func(what string) error {
		return fmt.Errorf("salsagomlx: snapshot: %s (offset %d of %d bytes)", what, len(data)-r.Len(), len(data))
	}
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapshotMagic {
		return fail("not a salsagomlx snapshot")
	}
	var version, dir, nv uint32
	var lr float64
	rd := func(v any) bool { return binary.Read(r, binary.LittleEndian, v) == nil }
	if !rd(&version) {
		return fail("truncated")
	}
	if version != snapshotVersion {
		return fmt.Errorf("salsagomlx: snapshot version %d: this build reads %d", version, snapshotVersion)
	}
	if !rd(&dir) || !rd(&lr) || !rd(&nv) {
		return fail("truncated")
	}
	if Direction(dir) != t.cfg.Direction {
		return fmt.Errorf("salsagomlx: snapshot direction %s: the trainer's is %s", Direction(dir), t.cfg.Direction)
	}
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fail(fmt.Sprintf("lr = %v: must be finite and > 0", lr))
	}
	type entry struct {
		path string
		val  *tensors.Tensor
	}
	entries := make([]entry, 0, nv)
	seen := map[string]bool{}
	for i := uint32(0); i < nv; i++ {
		var pl, dt, rank uint32
		if !rd(&pl) || int64(pl) > int64(r.Len()) {
			return fail("truncated")
		}
		pb := make([]byte, pl)
		if _, err := io.ReadFull(r, pb); err != nil {
			return fail("truncated")
		}
		path := string(pb)
		if !snapshotPath(path) || seen[path] {
			return fail(fmt.Sprintf("variable %q: unexpected or repeated", path))
		}
		seen[path] = true
		if !rd(&dt) || !rd(&rank) || rank > 16 {
			return fail(fmt.Sprintf("variable %q: bad header", path))
		}
		dims := make([]int, rank)
		for k := range dims {
			var d uint64
			if !rd(&d) || d > math.MaxInt32 {
				return fail(fmt.Sprintf("variable %q: bad dimensions", path))
			}
			dims[k] = int(d)
		}
		dtype := dtypes.DType(dt)
		if dtype != dtypes.Float32 && dtype != dtypes.Float64 && dtype != dtypes.Int64 {
			return fail(fmt.Sprintf("variable %q: dtype %s: must be Float32, Float64 or Int64", path, dtype))
		}
		sh := shapes.Make(dtype, dims...)
		var nb uint64
		if !rd(&nb) || nb > uint64(r.Len()) {
			return fail(fmt.Sprintf("variable %q: truncated", path))
		}
		if nb != uint64(sh.ByteSize()) {
			return fail(fmt.Sprintf("variable %q: %d bytes for shape %s", path, nb, sh))
		}
		if v := t.store.GetVariable(path); v != nil && !v.Shape().Equal(sh) {
			return fmt.Errorf("salsagomlx: snapshot variable %s has shape %s: the trainer's is %s", path, sh, v.Shape())
		}
		val := tensors.FromShape(sh)
		var rerr error
		if err := val.MutableBytes(func(b []byte) { _, rerr = io.ReadFull(r, b) }); err != nil || rerr != nil {
			return fail(fmt.Sprintf("variable %q: truncated", path))
		}
		entries = append(entries, entry{path, val})
	}
	if r.Len() != 0 {
		return fail("trailing bytes")
	}
	for _, v := range t.snapshotVars() {
		if !seen[v.Path()] {
			return fmt.Errorf("salsagomlx: snapshot has no variable %s: it is not from this model and direction", v.Path())
		}
	}
	// Apply.
	for _, e := range entries {
		if v := t.store.GetVariable(e.path); v != nil {
			if err := v.SetValue(e.val); err != nil {
				return err
			}
			continue
		}
		v, err := t.store.CreateVariable(e.path, e.val)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(e.path, "/model/") {
			v.SetTrainable(false)
		}
	}
	if err := t.lrVar.SetValue(tensors.FromScalar(float32(lr))); err != nil {
		return err
	}
	t.lr = lr
	return nil
}
