package salsagomlx

import (
	"errors"
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
)

// Paths of the trainer's scratch variables: values kept from the gradient
// phase of a searching step for its trials and its update. They are not
// part of a snapshot.
const (
	scratchScope = StateScope + "/scratch"
	scratchRNG   = scratchScope + "/rng"   // the store's RNG state before the step
	scratchState = scratchScope + "/state" // a recurrent model's state before the step
	statePath    = StateScope + "/state"   // a recurrent model's carried state
)

// rngPath is the path of the store's RNG state variable.
var rngPath = model.JoinPath("/", model.RNGStateVariableName)

// logits runs the model under "/model": the logits, and for a recurrent
// model the next state from state.
func (t *Trainer) logits(s *model.Scope, x, state *Node) (logits, next *Node) {
	if t.rec != nil {
		logits, next = t.rec.Forward(s.In("model"), x, state)
		if logits.Rank() != 3 {
			panic(fmt.Errorf("salsagomlx: recurrent logits shape %s: must be [batch, T, classes]", logits.Shape()))
		}
		if !next.Shape().Equal(state.Shape()) {
			panic(fmt.Errorf("salsagomlx: recurrent model returned a state of shape %s from one of shape %s", next.Shape(), state.Shape()))
		}
		return logits, next
	}
	logits = t.modelFn(s.In("model"), x)
	if logits.Rank() != 2 {
		panic(fmt.Errorf("salsagomlx: logits shape %s: must be [batch, classes]", logits.Shape()))
	}
	return logits, nil
}

// crossEntropy is the softmax cross-entropy of each example (or token) with
// integer labels y: [batch] (or [batch, 1]) for logits [batch, classes], or
// [batch, T] for logits [batch, T, classes].
func crossEntropy(logits, y *Node) *Node {
	ls := logits.Shape()
	if y.Rank() == ls.Rank() && y.Shape().Dim(-1) == 1 {
		y = Reshape(y, y.Shape().Dimensions[:y.Rank()-1]...)
	}
	ok := y.Rank() == ls.Rank()-1 && y.DType().IsInt()
	for i := 0; ok && i < y.Rank(); i++ {
		ok = y.Shape().Dim(i) == ls.Dim(i)
	}
	if !ok {
		panic(fmt.Errorf("salsagomlx: labels %s do not fit logits %s: want integer labels of shape %v (or with a trailing axis of 1)",
			y.Shape(), ls, ls.Dimensions[:ls.Rank()-1]))
	}
	logp := LogSoftmax(logits)
	onehot := OneHot(y, ls.Dim(-1), logp.DType())
	return Neg(ReduceSum(Mul(onehot, logp), -1))
}

// objective builds f on (x, y) in the graph's current mode: the mean
// cross-entropy plus the regularization losses that the model added with
// train.AddRegularizationLoss; and the next state of a recurrent model.
func (t *Trainer) objective(s *model.Scope, x, y, state *Node) (f, next *Node) {
	logits, next := t.logits(s, x, state)
	f = ReduceAllMean(crossEntropy(logits, y))
	if r := train.GetRegularizationLoss(x.Graph()); r != nil {
		f = Add(f, ConvertDType(r, f.DType()))
	}
	return f, next
}

// stateVariable returns the carried state of a recurrent model for batches
// of the size of x, starting at zero.
func (t *Trainer) stateVariable(x *Node) *model.Variable {
	sh := t.rec.StateShape(x.Shape().Dim(0))
	if v := t.store.GetVariable(statePath); v != nil && !v.Shape().Equal(sh) {
		panic(fmt.Errorf("salsagomlx: a recurrent model trains on batches of one size: state %s for this batch of %d, %s before",
			sh, x.Shape().Dim(0), v.Shape()))
	}
	return t.store.VariableWithShape(statePath, sh, Zeros).SetTrainable(false)
}

func (t *Trainer) scratch(path string, sh shapes.Shape) *model.Variable {
	return t.store.VariableWithShape(path, sh, Zeros).SetTrainable(false)
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

// decays reports whether variable v takes the weight decay (Config.DecayAll).
func (t *Trainer) decays(v *model.Variable) bool {
	return t.cfg.WeightDecay != 0 && (t.cfg.DecayAll || v.Shape().Rank() >= 2)
}

// l2 is 0.5·wd·Σ‖x_i‖² over the decaying variables, in parameter order.
func (t *Trainer) l2(vs []*model.Variable, xs []*Node) *Node {
	sum := ScalarZero(xs[0].Graph(), xs[0].DType())
	decayed := false
	for i, x := range xs {
		if t.decays(vs[i]) {
			sum, decayed = Add(sum, ReduceAllSum(Square(x))), true
		}
	}
	if !decayed {
		return sum
	}
	return MulScalar(sum, 0.5*t.cfg.WeightDecay)
}

// clipAndDecay turns the gradients gs of the loss into g: clipped to
// Config.ClipNorm (PyTorch's clip_grad_norm_: a factor
// min(1, c/(‖g‖ + 1e-6))), then wd·x added for the decaying variables.
func (t *Trainer) clipAndDecay(vs []*model.Variable, xs, gs []*Node) []*Node {
	out := append([]*Node(nil), gs...)
	if c := t.cfg.ClipNorm; c > 0 {
		g := gs[0].Graph()
		sq := ScalarZero(g, dtypes.Float32)
		for _, gr := range gs {
			sq = Add(sq, ConvertDType(ReduceAllSum(Square(gr)), dtypes.Float32))
		}
		coef := Min(ScalarOne(g, dtypes.Float32), Div(Scalar(g, dtypes.Float32, c), AddScalar(Sqrt(sq), 1e-6)))
		for i := range out {
			out[i] = Mul(out[i], ConvertDType(coef, out[i].DType()))
		}
	}
	for i := range out {
		if t.decays(vs[i]) {
			out[i] = Add(out[i], MulScalar(xs[i], t.cfg.WeightDecay))
		}
	}
	return out
}

// pre is what the gradient phase saw before the model ran: the store's RNG
// state and a recurrent model's state, which the trials start from again.
type pre struct{ rng, state *Node }

// lossAndGrad builds, in training mode, f + L2 and g for each trainable
// variable (see [Trainer.clipAndDecay]), and updates the carried state of a
// recurrent model.
func (t *Trainer) lossAndGrad(s *model.Scope, x, y *Node) (vs []*model.Variable, xs []*Node, loss *Node, gs []*Node, p pre) {
	g := x.Graph()
	t.store.SetTraining(g, true)
	p.rng = t.rngVar.NodeValue(g)
	var sv *model.Variable
	if t.rec != nil {
		sv = t.stateVariable(x)
		p.state = sv.NodeValue(g)
	}
	f, next := t.objective(s, x, y, p.state)
	if sv != nil {
		sv.SetNodeValue(next)
	}
	vs = t.bindTrainable(g)
	xs = make([]*Node, len(vs))
	for i, v := range vs {
		xs[i] = v.NodeValue(g)
	}
	gs = t.clipAndDecay(vs, xs, Gradient(f, xs...))
	return vs, xs, Add(f, ConvertDType(t.l2(vs, xs), f.DType())), gs, p
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

// fusedGraph is a whole step at the current α: loss, g, d, the update (and,
// with stats, ⟨x⁺,d⟩ and ‖d‖²). A step whose loss or ‖d‖² (and, with
// stats, ⟨x⁺,d⟩) is not finite writes no variable
// ([Trainer.keepUnlessFinite]); without stats, x⁺ = x − αd is finite when
// d is, short of an overflow, and one reduction is saved.
func (t *Trainer) fusedGraph(s *model.Scope, x, y *Node, stats bool) []*Node {
	vs, xs, loss, gs, _ := t.lossAndGrad(s, x, y)
	x1s, ds := t.direction(vs, xs, gs)
	d2 := perTensorDots(ds, ds)
	if !stats {
		t.keepUnlessFinite(loss.Graph(), loss, d2)
		return []*Node{loss}
	}
	x1d := perTensorDots(x1s, ds)
	t.keepUnlessFinite(loss.Graph(), loss, x1d, d2)
	return []*Node{loss, x1d, d2}
}

// keepUnlessFinite makes every variable that graph g has changed so far
// keep its value from before the graph unless all of checks are finite:
// a step with a non-finite loss or direction writes nothing back (the
// parameters, the momentum or Adam's moments, batch-norm statistics, a
// recurrent state, the RNG), so the caller, told by the scheduler's
// refusal, can go on from the state before it.
func (t *Trainer) keepUnlessFinite(g *Graph, checks ...*Node) {
	var ok *Node
	for _, c := range checks {
		f := LogicalAll(IsFinite(c))
		if ok == nil {
			ok = f
		} else {
			ok = LogicalAnd(ok, f)
		}
	}
	for v := range t.store.IterVariables() {
		if !v.ChangedInGraph(g) {
			continue
		}
		if old := g.GetParameterByName(v.Path()); old != nil {
			v.SetNodeValue(Where(ok, v.NodeValue(g), old))
		}
	}
}

// gradGraph is the first phase of a searching step: the loss and g, kept
// with the RNG and recurrent state the model started from, so that every
// trial evaluates the same function of x (same dropout mask, same state).
func (t *Trainer) gradGraph(s *model.Scope, x, y *Node) (*Node, *Node) {
	vs, _, loss, gs, p := t.lossAndGrad(s, x, y)
	gss := t.keepSearch(vs, gs)
	t.scratch(scratchRNG, p.rng.Shape()).SetNodeValue(p.rng)
	if p.state != nil {
		t.scratch(scratchState, p.state.Shape()).SetNodeValue(p.state)
	}
	t.keepUnlessFinite(loss.Graph(), loss, gss)
	return loss, gss
}

// keepSearch keeps g for the update and the trials and, with
// Config.SearchAlongD, s = d_k as the update will compute it; it returns
// the per-tensor ⟨g,s⟩. The Trainer's and the Optimizer's gradient phases
// share it.
func (t *Trainer) keepSearch(vs []*model.Variable, gs []*Node) *Node {
	ss := gs
	if t.cfg.SearchAlongD {
		ss = make([]*Node, len(vs))
	}
	for i, v := range vs {
		t.stateVar("g", v).SetNodeValue(gs[i])
		if t.cfg.SearchAlongD {
			ss[i] = t.previewD(v, gs[i])
			t.stateVar("s", v).SetNodeValue(ss[i])
		}
	}
	return perTensorDots(gs, ss)
}

// searchVar names the state holding the search direction: g, or s = d_k.
func (t *Trainer) searchVar() string {
	if t.cfg.SearchAlongD {
		return "s"
	}
	return "g"
}

// previewD returns the QHM direction d = (1−ν)g + ν(βh + (1−β)g) that the
// update will take from g, without changing h.
func (t *Trainer) previewD(v *model.Variable, gr *Node) *Node {
	beta, nu := t.cfg.Beta, t.cfg.Nu
	if beta == 0 || nu == 0 {
		return gr
	}
	h := Add(MulScalar(t.stateVar("h", v).NodeValue(gr.Graph()), beta), MulScalar(gr, 1-beta))
	if nu == 1 {
		return h
	}
	return Add(MulScalar(gr, 1-nu), MulScalar(h, nu))
}

// trialGraph is f(x − η·s) + L2 (s: g, or d_k) on the step's batch: in
// training mode like the gradient phase, from the same RNG state and
// recurrent state, so that the trial at η = 0 is the loss of the gradient
// phase. Nothing the model
// writes (batch-norm running statistics, RNG, state) is kept: the graph
// changes no variable.
func (t *Trainer) trialGraph(s *model.Scope, x, y, eta *Node) *Node {
	g := x.Graph()
	if t.trainable == nil {
		panic(errors.New("salsagomlx: trial before the first gradient step"))
	}
	t.store.SetTraining(g, true)
	type bound struct {
		v     *model.Variable
		param *Node
	}
	var vars []bound
	for v := range t.store.Scope("/model").IterVariables() {
		vars = append(vars, bound{v, v.NodeValue(g)})
	}
	vars = append(vars, bound{t.rngVar, t.rngVar.NodeValue(g)})
	trialXs := make([]*Node, len(t.trainable))
	for i, v := range t.trainable {
		gv := t.stateVar(t.searchVar(), v).NodeValue(g)
		trialXs[i] = Sub(v.NodeValue(g), Mul(ConvertDType(eta, gv.DType()), gv))
		v.SetNodeValue(trialXs[i])
	}
	t.rngVar.SetNodeValue(t.scratch(scratchRNG, t.rngVar.Shape()).NodeValue(g))
	var state *Node
	if t.rec != nil {
		sv := t.stateVariable(x)
		vars = append(vars, bound{sv, sv.NodeValue(g)})
		state = t.scratch(scratchState, sv.Shape()).NodeValue(g)
	}
	f, _ := t.objective(s, x, y, state)
	for _, b := range vars {
		if b.v.ChangedInGraph(g) {
			b.v.SetNodeValue(b.param)
		}
	}
	return Add(f, ConvertDType(t.l2(t.trainable, trialXs), f.DType()))
}

// updateGraph is the second phase of a searching step: x ← x − α·d from the
// kept g; it returns ⟨x⁺,d⟩ and ‖d‖².
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

// bindForEval binds every model variable as a graph parameter while in
// training mode, so that the Go backend does not embed their current values
// as constants, then switches the graph to eval mode.
func (t *Trainer) bindForEval(g *Graph) {
	t.store.SetTraining(g, true)
	for v := range t.store.Scope("/model").IterVariables() {
		v.NodeValue(g)
	}
	t.store.SetTraining(g, false)
}

// evalGraph returns the per-example cross-entropy (no L2 term, no
// regularization) and the predicted class, in eval mode, x unchanged.
func (t *Trainer) evalGraph(s *model.Scope, x, y *Node) (*Node, *Node) {
	t.bindForEval(x.Graph())
	logits, _ := t.logits(s, x, nil)
	return crossEntropy(logits, y), ArgMax(logits, -1, dtypes.Int32)
}

// evalSeqGraph is evalGraph for a recurrent model, from the state given as
// an input; it also returns the next state.
func (t *Trainer) evalSeqGraph(s *model.Scope, x, y, state *Node) (*Node, *Node, *Node) {
	t.bindForEval(x.Graph())
	logits, next := t.logits(s, x, state)
	return crossEntropy(logits, y), ArgMax(logits, -1, dtypes.Int32), next
}
