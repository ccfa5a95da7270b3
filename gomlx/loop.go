package salsagomlx

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/metric"

	"github.com/salsaopt/salsa/schedule"
)

// Paths of what a searching step of a train.Loop keeps for its trials: the
// step's inputs and labels, one variable each, and ‖g‖² per tensor.
const (
	scratchInput = scratchScope + "/input" // /salsa/scratch/input/<i>
	scratchLabel = scratchScope + "/label" // /salsa/scratch/label/<i>
	stepGGVar    = stepScope + "/gg"       // [⟨g_{k,i},s_{k,i}⟩]_i, one per tensor
)

// SchedulerParam is the store parameter (scope "/salsa", key "scheduler")
// that holds the attached scheduler's snapshot ([schedule.Scheduler]'s
// MarshalBinary, JSON), written when a GoMLX checkpoint is saved and read
// back by [Optimizer.Attach].
const SchedulerParam = StateScope + "/scheduler"

// Graph parameters the wrapped model and loss functions of [NewTrainer] set
// in a training graph, for [Optimizer.UpdateGraph] to keep.
const (
	capturedKey = StateScope + "/captured" // *captured
)

type captured struct {
	spec   any
	inputs []*Node
	labels []*Node
	rng    *Node // the store's RNG state before the model ran
}

// NewTrainer is train.NewTrainer with opt as the optimizer: the same
// arguments, the same *train.Trainer for a stock train.Loop (hooks, progress
// bar, metrics, global_step, Eval, checkpoints). It wraps modelFn and lossFn
// so that a training graph also keeps the step's inputs, labels and RNG
// state in scratch variables, and it gives opt the model and loss, so that
// [Optimizer.Attach] accepts a scheduler with a line search (SSLS, SALSA):
// after each train step, the hook evaluates the trial losses
// f(x − η·g) on the same mini-batch, in training mode with the same dropout
// mask, then makes the update.
//
// Evaluation on the Go backend: the model is built in eval mode, and the
// loss and metrics of an evaluation graph are built in training mode, with
// every variable a parameter (see bindAsParameters), so that Trainer.Eval
// follows the training and GoMLX's mean metrics add up every batch.
//
// The model's variables live where modelFn puts them, under the scope
// GoMLX's trainer gives it (the root scope): nothing moves them under
// "/model" as [Trainer] does. Labels are whatever lossFn takes ([n, 1] for
// GoMLX's sparse losses).
//
// Like train.NewTrainer it panics on error: opt nil, or built on another
// store.
func NewTrainer[ModelFnT train.ModelFnCompatible](backend compute.Backend, store *model.Store, modelFn ModelFnT,
	lossFn train.LossFn, opt *Optimizer, trainMetrics, evalMetrics []metric.Interface) *train.Trainer {
	if opt == nil {
		panic(errors.New("salsagomlx: NewTrainer: opt must not be nil"))
	}
	if store != opt.t.store {
		panic(errors.New("salsagomlx: NewTrainer: opt was built on another store"))
	}
	fn, err := normalizeModelFn(modelFn)
	if err != nil {
		panic(err)
	}
	rng, err := rngVariable(store)
	if err != nil {
		panic(err)
	}
	opt.t.backend, opt.t.rngVar = backend, rng
	opt.modelFn, opt.lossFn = fn, lossFn
	wrappedModel := func(scope *model.Scope, spec any, inputs []*Node) []*Node {
		if len(inputs) > 0 {
			g := inputs[0].Graph()
			if !scope.Store().IsTraining(g) {
				// An evaluation graph: see bindAsParameters.
				bindAsParameters(scope.Store(), g)
				defer scope.Store().SetTraining(g, true)
			} else if opt.search {
				model.SetGraphParam(g, capturedKey, &captured{spec: spec, inputs: inputs, rng: rng.NodeValue(g)})
			}
		}
		return fn(scope, spec, inputs)
	}
	var wrappedLoss train.LossFn
	if lossFn != nil {
		wrappedLoss = func(labels, predictions []*Node) *Node {
			if len(predictions) > 0 && opt.search {
				if c, ok := model.GetGraphParam(predictions[0].Graph(), capturedKey); ok {
					c.(*captured).labels = labels
				}
			}
			return lossFn(labels, predictions)
		}
	}
	tr := train.NewTrainer(backend, store, train.ModelFn(wrappedModel), wrappedLoss, opt, trainMetrics, evalMetrics)
	opt.trainer = tr
	return tr
}

// bindAsParameters makes every variable of the store (but the adapter's
// own) a parameter of the evaluation graph g, before the model is built in
// eval mode; the model's wrapper then puts g back in training mode, so that
// the variables the loss and the metrics create (the accumulators of GoMLX's
// mean metrics) are parameters too. The Go backend embeds a variable's value
// as a constant in a graph that is not in training mode, and train.Trainer
// keeps its compiled evaluation graph: without this, every Trainer.Eval
// would see the model of the first one, and a mean metric would start each
// batch from the constant it was compiled with and report the last batch's
// value alone.
func bindAsParameters(store *model.Store, g *Graph) {
	store.SetTraining(g, true)
	for v := range store.IterVariables() {
		if v.HasValue() && !strings.HasPrefix(v.Path(), StateScope+"/") {
			v.NodeValue(g)
		}
	}
	store.SetTraining(g, false)
}

// PaperSALSA is SALSA with the paper's defaults ([schedule.Defaults] with
// [schedule.PresetPaper]) for n training examples in mini-batches of b,
// starting from the learning rate lr0: N_min = min(1000, ⌈n/b⌉),
// K_test = min(100, ⌈n/b⌉), θ = 1/8, τ = 1/10.
func PaperSALSA(n, b int, lr0 float64) (*schedule.SALSA, error) {
	c, err := schedule.Defaults(schedule.PresetPaper, n, b, lr0)
	if err != nil {
		return nil, err
	}
	return schedule.NewSALSA(c.SALSA())
}

var (
	scopeType = reflect.TypeFor[*model.Scope]()
	graphType = reflect.TypeFor[*Graph]()
	nodeType  = reflect.TypeFor[*Node]()
	nodesType = reflect.TypeFor[[]*Node]()
	anyType   = reflect.TypeFor[any]()
)

// normalizeModelFn turns any of the signatures train.ModelFnCompatible
// allows into a train.ModelFn, as train.NewTrainer does.
func normalizeModelFn(fn any) (train.ModelFn, error) {
	v := reflect.ValueOf(fn)
	t := v.Type()
	bad := fmt.Errorf("salsagomlx: model function of type %s: not a train.ModelFnCompatible signature", t)
	if t.Kind() != reflect.Func || v.IsNil() || t.NumIn() < 2 || t.In(0) != scopeType {
		return nil, bad
	}
	in := 1
	hasSpec := t.In(1) == anyType
	if hasSpec {
		in++
	}
	rest := t.NumIn() - in
	var kind string // "graph", "nodes" (rest of them) or "slice"
	switch {
	case rest == 1 && t.In(in) == graphType:
		kind = "graph"
	case rest == 1 && t.In(in) == nodesType:
		kind = "slice"
	case rest >= 1:
		for i := in; i < t.NumIn(); i++ {
			if t.In(i) != nodeType {
				return nil, bad
			}
		}
		kind = "nodes"
	default:
		return nil, bad
	}
	sliceOut := t.NumOut() == 1 && t.Out(0) == nodesType
	if !sliceOut {
		for i := 0; i < t.NumOut(); i++ {
			if t.Out(i) != nodeType {
				return nil, bad
			}
		}
	}
	return func(scope *model.Scope, spec any, inputs []*Node) []*Node {
		args := []reflect.Value{reflect.ValueOf(scope)}
		if hasSpec {
			args = append(args, reflect.ValueOf(&spec).Elem())
		}
		switch kind {
		case "graph":
			args = append(args, reflect.ValueOf(inputs[0].Graph()))
		case "slice":
			args = append(args, reflect.ValueOf(inputs))
		default:
			if len(inputs) < rest {
				panic(fmt.Errorf("salsagomlx: the model function takes %d inputs, the dataset gave %d", rest, len(inputs)))
			}
			for i := 0; i < rest; i++ {
				args = append(args, reflect.ValueOf(inputs[i]))
			}
		}
		out := v.Call(args)
		if sliceOut {
			return out[0].Interface().([]*Node)
		}
		nodes := make([]*Node, len(out))
		for i, o := range out {
			nodes[i] = o.Interface().(*Node)
		}
		return nodes
	}, nil
}

// searchGraph is [Optimizer.UpdateGraph] for a step with a line search: the
// loss f + L2 and g, kept with the step's inputs, labels and RNG state for
// the trials and the update that the OnStep hook makes; x is not changed.
func (o *Optimizer) searchGraph(scope *model.Scope, g *Graph, loss *Node, vs []*model.Variable, xs []*Node) {
	c0, ok := model.GetGraphParam(g, capturedKey)
	if !ok {
		panic(errors.New("salsagomlx: the scheduler runs a line search, which needs the step's inputs: " +
			"build the train.Trainer with salsagomlx.NewTrainer"))
	}
	c := c0.(*captured)
	if o.lossFn != nil && c.labels == nil {
		panic(errors.New("salsagomlx: the line search found no labels in the training graph"))
	}
	// The variables this graph reads (the model's, batch-norm statistics,
	// the RNG): a trial binds them all and writes none back.
	o.bound = o.bound[:0]
	for v := range o.t.store.IterVariables() {
		if v.InUseByGraph(g) && !strings.HasPrefix(v.Path(), StateScope+"/") {
			o.bound = append(o.bound, v)
		}
	}
	if !o.t.rngVar.InUseByGraph(g) {
		o.bound = append(o.bound, o.t.rngVar)
	}
	gs := o.t.clipAndDecay(vs, xs, Gradient(loss, xs...))
	fullLoss := Add(loss, ConvertDType(o.t.l2(vs, xs), loss.DType()))
	gg := o.t.keepSearch(vs, gs)
	o.t.trainable = vs
	o.t.scratch(scratchRNG, c.rng.Shape()).SetNodeValue(c.rng)
	keep := func(prefix string, nodes []*Node) {
		for i, n := range nodes {
			p := fmt.Sprintf("%s/%d", prefix, i)
			if v := o.t.store.GetVariable(p); v != nil && !v.Shape().Equal(n.Shape()) {
				panic(fmt.Errorf("salsagomlx: the line search in a train.Loop needs batches of one shape: %s is %s, was %s "+
					"(drop the incomplete last batch)", p, n.Shape(), v.Shape()))
			}
			o.t.scratch(p, n.Shape()).SetNodeValue(n)
		}
	}
	keep(scratchInput, c.inputs)
	keep(scratchLabel, c.labels)
	o.spec, o.nInputs, o.nLabels = c.spec, len(c.inputs), len(c.labels)
	o.t.keepUnlessFinite(g, fullLoss, gg) // the step's outputs below are written either way
	store := o.t.store
	store.VariableWithShape(stepLossVar, fullLoss.Shape(), Zeros).SetTrainable(false).SetNodeValue(fullLoss)
	store.VariableWithShape(stepGGVar, gg.Shape(), Zeros).SetTrainable(false).SetNodeValue(gg)
	_ = scope
}

// trialLoopGraph is f(x − η·s) + L2 (s: g, or d_k) on the kept batch, with
// the kept RNG state, in training mode: the function of x whose value at
// η = 0 is the loss the train step computed. It changes no variable.
func (o *Optimizer) trialLoopGraph(scope *model.Scope, eta *Node) *Node {
	g := eta.Graph()
	t := o.t
	t.store.SetTraining(g, true)
	params := make([]*Node, len(o.bound))
	for i, v := range o.bound {
		params[i] = v.NodeValue(g)
	}
	trialXs := make([]*Node, len(t.trainable))
	for i, v := range t.trainable {
		gv := t.stateVar(t.searchVar(), v).NodeValue(g)
		trialXs[i] = Sub(v.NodeValue(g), Mul(ConvertDType(eta, gv.DType()), gv))
		v.SetNodeValue(trialXs[i])
	}
	t.rngVar.SetNodeValue(t.store.GetVariable(scratchRNG).NodeValue(g))
	read := func(prefix string, n int) []*Node {
		nodes := make([]*Node, n)
		for i := range nodes {
			nodes[i] = t.store.GetVariable(fmt.Sprintf("%s/%d", prefix, i)).NodeValue(g)
		}
		return nodes
	}
	inputs, labels := read(scratchInput, o.nInputs), read(scratchLabel, o.nLabels)
	predictions := o.modelFn(scope, o.spec, inputs)
	if o.lossFn != nil {
		train.AddMainLoss(o.lossFn(labels, predictions))
	}
	f := train.TotalLoss(g)
	if f == nil {
		panic(errors.New("salsagomlx: the trial graph has no loss (no lossFn and no AddMainLoss)"))
	}
	for i, v := range o.bound {
		if v.ChangedInGraph(g) {
			v.SetNodeValue(params[i])
		}
	}
	return Add(f, ConvertDType(t.l2(t.trainable, trialXs), f.DType()))
}

// searchStep closes a step with a line search: Begin with the kept loss and
// ‖g‖², the trials while s asks, the update at the chosen rate, End.
func (o *Optimizer) searchStep(s schedule.Scheduler) (schedule.Result, Stats, error) {
	vals, err := o.readVars(stepLossVar, stepGGVar)
	if err != nil {
		return schedule.Result{}, Stats{}, err
	}
	st := Stats{Loss: vals[0], GG: vals[1]}
	if o.trial == nil {
		if o.trial, err = model.NewExec(o.t.backend, o.t.store, o.trialLoopGraph); err != nil {
			return schedule.Result{}, st, err
		}
		if o.update, err = model.NewExec(o.t.backend, o.t.store, o.t.updateGraph); err != nil {
			return schedule.Result{}, st, err
		}
	}
	req, err := s.Begin(st.Loss, st.GG)
	for err == nil && req.Eval {
		res, e := call("trial", o.trial, float32(req.Eta))
		if err = e; err == nil {
			req, err = s.Trial(scalar(res[0]))
		}
	}
	if err == nil {
		err = o.t.SetLR(req.LR)
	}
	if err == nil {
		res, e := call("update", o.update)
		if err = e; err == nil {
			st.X1D, st.D2 = sum(res[0]), sum(res[1])
		}
	}
	if err != nil {
		s.Abort()
		return schedule.Result{}, st, err
	}
	res, err := o.t.end(s, &st)
	return res, st, err
}

// ScratchVariables lists the variables of the store that hold per-step
// scratch values (the kept gradient /salsa/g, the kept batch and RNG state,
// the step's loss and inner products): nothing a resumed run needs. The
// OnStep hook of [Optimizer.Attach] excludes them from the saves of a
// GoMLX checkpoint.Handler that is the store's loader; pass them to
// Handler.ExcludeVarsFromSaving for any other handler.
func (o *Optimizer) ScratchVariables() []*model.Variable {
	var vs []*model.Variable
	for v := range o.t.store.IterVariables() {
		if scratchPath(v.Path()) {
			vs = append(vs, v)
		}
	}
	return vs
}

// scratchScopes hold a step's scratch values: g, s = d_k (with
// Config.SearchAlongD) and the kept batch and RNG state.
var scratchScopes = []string{StateScope + "/g", StateScope + "/s", scratchScope}

func scratchPath(p string) bool {
	for _, sc := range scratchScopes {
		if p == sc || strings.HasPrefix(p, sc+"/") {
			return true
		}
	}
	switch p {
	case stepLossVar, stepX1DVar, stepD2Var, stepGGVar:
		return true
	}
	return false
}

// excludeScratch keeps the scratch variables out of the saves of the
// store's checkpoint handler, when the store has one.
func (o *Optimizer) excludeScratch() {
	h, ok := o.t.store.Loader().(*checkpoint.Handler)
	if !ok || h == nil {
		return
	}
	if n := o.t.store.NumVariables(); h != o.excludedFor || n != o.excludedVars {
		h.ExcludeVarsFromSaving(o.ScratchVariables()...)
		o.excludedFor, o.excludedVars = h, n
	}
}

// schedulerState is the value of [SchedulerParam]: the live scheduler,
// marshalled only when a checkpoint is written.
type schedulerState struct{ s schedule.Scheduler }

// MarshalJSON writes the scheduler's snapshot as a JSON string.
func (p schedulerState) MarshalJSON() ([]byte, error) {
	b, err := p.s.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("salsagomlx: saving the scheduler %s: %w", p.s.Name(), err)
	}
	return json.Marshal(string(b))
}

// String is the scheduler's name and step.
func (p schedulerState) String() string {
	return fmt.Sprintf("%s at step %d", p.s.Name(), p.s.Step())
}

// restoreScheduler loads into s the snapshot a checkpoint left in the
// store's [SchedulerParam], if any and if s has made no step yet.
func (o *Optimizer) restoreScheduler(s schedule.Scheduler) error {
	v, ok := o.t.store.GetParam(SchedulerParam)
	if !ok || s.Step() != 0 {
		return nil
	}
	var data string
	switch p := v.(type) {
	case string:
		data = p
	case schedulerState:
		if p.s == s {
			return nil
		}
		b, err := p.s.MarshalBinary()
		if err != nil {
			return err
		}
		data = string(b)
	default:
		return fmt.Errorf("salsagomlx: store parameter %s has type %T, want a scheduler snapshot", SchedulerParam, v)
	}
	if err := s.UnmarshalBinary([]byte(data)); err != nil {
		return fmt.Errorf("salsagomlx: restoring the scheduler from the store's %s: %w", SchedulerParam, err)
	}
	return nil
}
