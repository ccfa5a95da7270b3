package salsagomlx

import (
	"errors"
	"fmt"
	"iter"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/direction"
)

// hostState is the [Host] direction of a Trainer.
type hostState struct {
	dir direction.LRAware[float32]       // nil until the first update or a restore
	sf  *direction.ScheduleFree[float32] // dir when Schedule-Free: evaluated at x
	avg *direction.PolyAverage[float32]  // the iterate average when HostConfig.Average

	x, g, d []float32 // flat parameters, gradient, direction

	// gen counts the gradient steps and restores: the running statistics
	// refreshed at the evaluation point are reused while it is unchanged.
	gen       uint64
	cachedGen uint64
	cached    [][]float32 // running statistics after the refresh at gen cachedGen

	// During an evaluation at the evaluation point: the training values
	// of the parameters and of the running statistics, restored by EndEval.
	inEval   bool
	keepX    []float32
	keepRS   [][]float32
	evalVars []*model.Variable
}

// hostDirection returns the Host direction for n parameters, building it
// (and the average) on first use.
func (t *Trainer) hostDirection(n int) (direction.LRAware[float32], error) {
	h := &t.host
	if h.dir == nil {
		d, err := t.cfg.Host.New(n)
		if err != nil {
			return nil, fmt.Errorf("salsagomlx: host direction: %w", err)
		}
		sf, _ := d.(*direction.ScheduleFree[float32])
		if sf != nil && t.cfg.Host.Average {
			return nil, errors.New("salsagomlx: Config.Host.Average = true with a Schedule-Free direction: it is evaluated at its own x, so an iterate average would be kept and never used")
		}
		h.dir, h.sf = d, sf
	}
	if h.avg == nil && t.cfg.Host.Average {
		a, err := direction.NewPolyAverage[float32](t.cfg.Host.AverageGamma, n)
		if err != nil {
			return nil, fmt.Errorf("salsagomlx: host average: %w", err)
		}
		h.avg = a
	}
	if h.dir.Len() != n {
		return nil, fmt.Errorf("salsagomlx: host direction of %d parameters: the model has %d", h.dir.Len(), n)
	}
	return h.dir, nil
}

// paramVars is the trainable variables the graphs use, or before the first
// gradient graph (a restored trainer) the store's trainable variables under
// /model, in creation order.
func (t *Trainer) paramVars() []*model.Variable {
	if t.trainable != nil {
		return t.trainable
	}
	var vs []*model.Variable
	for v := range t.store.Scope("/model").IterVariables() {
		if v.Trainable {
			vs = append(vs, v)
		}
	}
	return vs
}

// numParams is the number of trainable parameters the graphs use.
func (t *Trainer) numParams() int {
	n := 0
	for _, v := range t.trainable {
		n += v.Shape().Size()
	}
	return n
}

// gather copies the values of vs, concatenated, into dst (resized).
func gather(dst []float32, vs []*model.Variable) ([]float32, error) {
	dst = dst[:0]
	for _, v := range vs {
		val, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("salsagomlx: %s: %w", v.Path(), err)
		}
		if val.DType() != dtypes.Float32 {
			return nil, fmt.Errorf("salsagomlx: %s is %s: the Host direction takes Float32 parameters", v.Path(), val.DType())
		}
		if err := tensors.ConstFlatData(val, func(f []float32) { dst = append(dst, f...) }); err != nil {
			return nil, fmt.Errorf("salsagomlx: %s: %w", v.Path(), err)
		}
	}
	return dst, nil
}

// normSq is ‖x‖² over the trainable variables the graphs use, summed in
// float64 on the host: the [schedule.Observation.X2] of a
// [schedule.NormAsker].
func (t *Trainer) normSq() (float64, error) {
	if t.trainable == nil {
		return 0, errors.New("salsagomlx: ‖x‖² before the first gradient step")
	}
	var sum float64
	for _, v := range t.trainable {
		val, err := v.Value()
		if err == nil {
			switch val.DType() {
			case dtypes.Float32:
				err = tensors.ConstFlatData(val, func(f []float32) { sum += direction.Dot(f, f) })
			case dtypes.Float64:
				err = tensors.ConstFlatData(val, func(f []float64) { sum += direction.Dot(f, f) })
			default:
				err = fmt.Errorf("is %s: ‖x‖² takes Float32 or Float64 parameters", val.DType())
			}
		}
		if err != nil {
			return 0, fmt.Errorf("salsagomlx: %s: %w", v.Path(), err)
		}
	}
	return sum, nil
}

// scatter writes src, concatenated, into the values of vs, in place.
func scatter(vs []*model.Variable, src []float32) error {
	off := 0
	for _, v := range vs {
		n := v.Shape().Size()
		val, err := v.Value()
		if err == nil {
			err = tensors.MutableFlatData(val, func(f []float32) { copy(f, src[off:off+n]) })
		}
		if err != nil {
			return fmt.Errorf("salsagomlx: %s: %w", v.Path(), err)
		}
		off += n
	}
	return nil
}

// hostUpdate makes the update of the Host direction from the g kept by the
// last gradient phase: the direction's Compute at the current α, x ← x −
// α·d on the host, then Schedule-Free's re-anchoring of y and the average.
// It returns ⟨x_{k+1},d_k⟩ and ‖d_k‖², summed in float64.
func (t *Trainer) hostUpdate() (x1d, d2 float64, err error) {
	if t.trainable == nil {
		return 0, 0, errors.New("salsagomlx: update before the first gradient step")
	}
	h := &t.host
	if h.inEval {
		return 0, 0, errors.New("salsagomlx: update between BeginEval and EndEval")
	}
	dir, err := t.hostDirection(t.numParams())
	if err != nil {
		return 0, 0, err
	}
	gv := make([]*model.Variable, len(t.trainable))
	for i, v := range t.trainable {
		gv[i] = t.stateVar("g", v)
	}
	if h.x, err = gather(h.x, t.trainable); err != nil {
		return 0, 0, err
	}
	if h.g, err = gather(h.g, gv); err != nil {
		return 0, 0, err
	}
	if cap(h.d) < len(h.x) {
		h.d = make([]float32, len(h.x))
	}
	h.d = h.d[:len(h.x)]
	if err := direction.ComputeAt(dir, t.lr, h.d, h.g, h.x); err != nil {
		return 0, 0, err
	}
	direction.Update(h.x, h.d, t.lr)
	for i, d := range h.d {
		x1d += float64(h.x[i]) * float64(d)
		d2 += float64(d) * float64(d)
	}
	if h.sf != nil {
		// y = (1−β)z + βx exactly, as the reference does: the evaluation's
		// round trip then restores it bit for bit.
		if err := h.sf.Train(h.x); err != nil {
			return 0, 0, err
		}
	}
	if h.avg != nil {
		if err := h.avg.Add(h.x); err != nil {
			return 0, 0, err
		}
	}
	return x1d, d2, scatter(t.trainable, h.x)
}

// runningStats lists the model's non-trainable variables (batch-norm running
// means and variances), which an evaluation at another point recomputes.
func (t *Trainer) runningStats() []*model.Variable {
	var vs []*model.Variable
	for v := range t.store.Scope("/model").IterVariables() {
		if !v.Trainable {
			vs = append(vs, v)
		}
	}
	return vs
}

func snapshotVals(vs []*model.Variable) ([][]float32, error) {
	out := make([][]float32, len(vs))
	for i := range vs {
		var err error
		if out[i], err = gather(nil, vs[i:i+1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func restoreVals(vs []*model.Variable, vals [][]float32) error {
	for i, v := range vs {
		if err := scatter([]*model.Variable{v}, vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// refreshGraph is a training-mode forward pass of a classifier on x that
// keeps only what the model writes besides its parameters and the RNG: the
// batch-norm running statistics.
func (t *Trainer) refreshGraph(s *model.Scope, x *Node) *Node {
	g := x.Graph()
	t.store.SetTraining(g, true)
	rng := t.rngVar.NodeValue(g)
	logits, _ := t.logits(s, x, nil)
	if t.rngVar.ChangedInGraph(g) {
		t.rngVar.SetNodeValue(rng)
	}
	return ReduceAllSum(logits)
}

// refreshStats runs the training-mode forward passes of refreshGraph over
// the inputs of refresh, which leave the model's batch-norm running
// statistics at the current parameters.
func (t *Trainer) refreshStats(refresh iter.Seq[*tensors.Tensor]) error {
	if t.refresh == nil {
		var err error
		if t.refresh, err = model.NewExec(t.backend, t.store, t.refreshGraph); err != nil {
			return err
		}
	}
	for x := range refresh {
		out, err := call("refresh", t.refresh, x)
		if err != nil {
			return err
		}
		out[0].FinalizeAll()
	}
	return nil
}

// EvalPoint reports whether the Trainer evaluates somewhere else than at its
// training parameters: Schedule-Free's x or the iterate average of a Host
// direction, once a step has been taken.
func (t *Trainer) EvalPoint() bool {
	h := &t.host
	return h.sf != nil && h.sf.Started() || h.avg != nil && h.avg.Steps() > 0
}

// BeginEval moves the model to its evaluation point (see
// [Trainer.EvalPoint]; otherwise it does nothing): the parameters to
// Schedule-Free's x or to the iterate average, and, for a classifier with
// batch norm, the running statistics to those of training-mode forward
// passes at that point over the batches of refresh (inputs only; the
// parameters and the RNG do not change), since the statistics collected in
// training belong to the training point y, not to x. Evaluate between
// BeginEval and [Trainer.EndEval], which restores the training parameters
// and statistics bit for bit. The refresh is made once per evaluation
// point: a second BeginEval before the next step reuses its statistics
// without reading refresh.
func (t *Trainer) BeginEval(refresh iter.Seq[*tensors.Tensor]) error {
	h := &t.host
	if h.inEval {
		return errors.New("salsagomlx: BeginEval twice without EndEval")
	}
	if !t.EvalPoint() {
		return nil
	}
	pv := t.paramVars()
	keepX, err := gather(h.keepX, pv)
	if err != nil {
		return err
	}
	if n := h.dir.Len(); n != len(keepX) {
		return fmt.Errorf("salsagomlx: host direction of %d parameters: the model has %d", n, len(keepX))
	}
	rs := t.runningStats()
	keepRS, err := snapshotVals(rs)
	if err != nil {
		return err
	}
	at := make([]float32, len(keepX))
	if h.sf != nil {
		err = h.sf.Eval(at)
	} else {
		err = h.avg.Eval(at)
	}
	if err != nil {
		return err
	}
	if err := scatter(pv, at); err != nil {
		return err
	}
	h.inEval, h.keepX, h.keepRS, h.evalVars = true, keepX, keepRS, pv
	if len(rs) == 0 || t.rec != nil || refresh == nil {
		return nil
	}
	if h.cached != nil && h.cachedGen == h.gen {
		return restoreVals(rs, h.cached)
	}
	if err := t.refreshStats(refresh); err != nil {
		return t.abortEval(err)
	}
	if h.cached, err = snapshotVals(rs); err != nil {
		return t.abortEval(err)
	}
	h.cachedGen = h.gen
	return nil
}

// abortEval ends a failed BeginEval, returning err.
func (t *Trainer) abortEval(err error) error {
	if eerr := t.EndEval(); eerr != nil {
		return errors.Join(err, eerr)
	}
	return err
}

// EndEval restores the training parameters and running statistics that
// [Trainer.BeginEval] replaced. It does nothing when BeginEval did nothing.
func (t *Trainer) EndEval() error {
	h := &t.host
	if !h.inEval {
		return nil
	}
	h.inEval = false
	if err := scatter(h.evalVars, h.keepX); err != nil {
		return err
	}
	return restoreVals(t.runningStats(), h.keepRS)
}

// HostDirection returns the Host direction (nil before the first update, or
// for QHM and Adam) and the iterate average (nil when off or not started).
func (t *Trainer) HostDirection() (direction.LRAware[float32], *direction.PolyAverage[float32]) {
	return t.host.dir, t.host.avg
}
