package train

import (
	"bytes"
	"encoding/gob"
	"fmt"

	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/gomlx/linear"
	"github.com/salsaopt/salsa/schedule"
)

func init() { Engines["native"] = newNativeEngine }

// nativeEngine trains softmax regression on flat float32 vectors with the
// hand-written kernels of package linear: no graph, no per-step dispatch.
// QHM is fused into linear's update; Adam and the peers' learning-rate-free
// and schedule-free directions come from package direction.
type nativeEngine struct {
	t    *linear.Softmax
	tr   *Split
	adam *direction.Adam[float32]
	// peer is a peer method's direction; sf is it when Schedule-Free (the
	// parameters hold its gradient point y, evaluated at x), avg is DoG's
	// polynomial-decay average (evaluated at it).
	peer direction.LRAware[float32]
	sf   *direction.ScheduleFree[float32]
	avg  *direction.PolyAverage[float32]
	keep []float32 // the training parameters during an evaluation at DoG's average
	// cand is the candidate copy of the parameters the scheduler asked for
	// (schedule.Result.Save), and saved the copy it confirmed
	// (schedule.Result.Confirm), to put back on a Rollback, and earlier the
	// one it kept before (schedule.Result.KeepEarlier); empty when there is
	// none, nil before the first and after the Release.
	cand, saved, earlier []float32
	// mean is the average x̄ of the decay's iterates (schedule.Result.Average)
	// over meanN of them; meanKeep holds the last iterate while the
	// parameters are x̄ (BeginAverage), nil otherwise.
	mean     []float64
	meanN    int
	meanKeep []float32
	d        []float32
	xb       []float32
	yb       []int32
	val      *Split // SetValidation: the split whose loss a scheduler may ask for
}

func newNativeEngine(p *Plan, tr *Split) (Engine, error) {
	if p.Options.Model != "logreg" {
		return nil, fmt.Errorf("--engine native: --model %s: only logreg", p.Options.Model)
	}
	d := p.Direction
	cfg := linear.Config{In: tr.Dim, Out: tr.Labels, WeightDecay: d.WeightDecay,
		SearchAlongD: p.Schedule.SSLS.SearchAlong == schedule.AlongD}
	e := &nativeEngine{tr: tr}
	switch d.Kind {
	case "qhm":
		cfg.Beta, cfg.Nu = d.Momentum, d.Nu
	case "adam":
		a, err := direction.NewAdam[float32](direction.AdamConfig{Beta1: d.AdamBeta1, Beta2: d.AdamBeta2, Eps: d.AdamEps},
			tr.Dim*tr.Labels+tr.Labels)
		if err != nil {
			return nil, err
		}
		e.adam = a
	default:
		if !lrAware(d.Kind) {
			return nil, fmt.Errorf("direction %q: must be qhm, adam or a peer's", d.Kind)
		}
		n := tr.Dim*tr.Labels + tr.Labels
		pd, err := newPeerDirection(d, n)
		if err != nil {
			return nil, err
		}
		e.peer = pd
		e.sf, _ = pd.(*direction.ScheduleFree[float32])
		if d.Kind == "dog" {
			if e.avg, err = direction.NewPolyAverage[float32](direction.DefaultPolyGamma, n); err != nil {
				return nil, err
			}
		}
	}
	t, err := linear.New(cfg)
	if err != nil {
		return nil, err
	}
	e.t = t
	if e.adam != nil || e.peer != nil {
		e.d = make([]float32, len(t.X))
	}
	return e, nil
}

func (e *nativeEngine) Name() string { return "native" }

// StartEpoch does nothing: a linear model carries no state.
func (e *nativeEngine) StartEpoch(int) error { return nil }

func (e *nativeEngine) gather(idx []int) {
	dim := e.tr.Dim
	e.xb, e.yb = e.xb[:0], e.yb[:0]
	for _, i := range idx {
		e.xb = append(e.xb, e.tr.X[i*dim:(i+1)*dim]...)
		e.yb = append(e.yb, e.tr.Y[i])
	}
}

// Step runs the protocol: Grad (loss and ‖g‖²), Begin, the trials the
// scheduler asks for, the update at its rate, End.
func (e *nativeEngine) Step(s schedule.Scheduler, b Batch) (StepOut, error) {
	e.gather(b.Idx)
	var out StepOut
	loss, gg, err := e.t.Grad(e.xb, e.yb)
	out.Loss = loss
	if err != nil {
		return out, err
	}
	req, err := s.Begin(loss, gg)
	for err == nil && req.Eval {
		var f float64
		if f, err = e.t.Trial(req.Eta); err == nil {
			req, err = s.Trial(f)
		}
	}
	if err != nil {
		return out, err
	}
	switch {
	case e.peer != nil:
		// The rate of the step first: the peers' state depends on it. L2 is
		// in g (linear adds wd·x at the parameters, y for Schedule-Free).
		err = direction.ComputeAt(e.peer, req.LR, e.d, e.t.Gradient(), e.t.X)
		if err == nil {
			out.StepSize = e.peer.EffectiveLR()
			out.X1D, out.D2, err = e.t.Apply(e.d, req.LR)
		}
		if err == nil && e.sf != nil {
			// Re-anchor the parameters to y = (1−β)z + βx exactly, as the
			// reference does: Train after an evaluation then restores them
			// bit for bit.
			err = e.sf.Train(e.t.X)
		}
		if err == nil && e.avg != nil {
			err = e.avg.Add(e.t.X)
		}
	case e.adam == nil:
		out.X1D, out.D2, err = e.t.Update(req.LR)
	default:
		// L2 is already in g (linear adds wd·x); Adam has no decay of its own.
		if err = e.adam.Compute(e.d, e.t.Gradient(), e.t.X); err == nil {
			out.X1D, out.D2, err = e.t.Apply(e.d, req.LR)
		}
	}
	if err != nil {
		return out, err
	}
	obs := schedule.Observation{X1D: out.X1D, D2: out.D2}
	if schedule.AsksNorm(s) {
		obs.X2 = direction.Dot(e.t.X, e.t.X) // only for a scheduler that reads it
		out.X2, out.HasX2 = obs.X2, true
	}
	res, err := s.End(obs)
	if err == nil {
		res, err = schedule.AnswerVal(s, res, e.valLoss)
	}
	out.Result = res
	if err == nil {
		err = e.keepOrRollback(res)
	}
	if err == nil && res.Average {
		if res.Rollback {
			e.meanN = 0 // the average starts again at the parameters put back
		}
		err = e.fold(res.Step)
	}
	if err == nil && res.ResetMomentum {
		err = e.ResetMomentum()
	}
	return out, err
}

// SetValidation gives Step the split whose loss a scheduler may ask for.
func (e *nativeEngine) SetValidation(sp *Split) { e.val = sp }

// valLoss is the loss on the validation split at the parameters, for a
// scheduler that asks for it after a step (schedule.AnswerVal).
func (e *nativeEngine) valLoss() (float64, error) {
	if e.val == nil {
		return 0, fmt.Errorf("native engine: no validation split (SetValidation)")
	}
	loss, _, err := e.Evaluate(e.val)
	return loss, err
}

// keepOrRollback copies the parameters as a candidate when res asks for
// one, keeps the candidate when res confirms it, and puts the kept copy
// back on a rollback; the caller then zeroes the momentum. A release frees
// the copies.
func (e *nativeEngine) keepOrRollback(res schedule.Result) error {
	if (res.Save || res.Rollback) && (e.sf != nil || e.avg != nil) {
		return fmt.Errorf("native engine: step %d: a rollback of the parameters with direction %T: its own state "+
			"(the averages) cannot be rolled back", res.Step, e.peer)
	}
	if err := res.CheckEarlier(); err != nil {
		return fmt.Errorf("native engine: %w", err)
	}
	if res.Save {
		e.cand = append(e.cand[:0], e.t.X...)
	}
	if res.Confirm && res.KeepEarlier && len(e.saved) > 0 {
		e.earlier = append(e.earlier[:0], e.saved...)
	}
	if res.Confirm {
		if len(e.cand) == 0 {
			return fmt.Errorf("native engine: step %d: a confirmation with no candidate copy", res.Step)
		}
		e.saved, e.cand = e.cand, e.saved[:0] // the old copy's memory holds the next candidate
	}
	if res.Rollback {
		from := e.saved
		if res.RollbackEarlier {
			from = e.earlier
		}
		if len(from) == 0 {
			return fmt.Errorf("native engine: step %d: a rollback with no parameters kept (earlier copy: %v)", res.Step, res.RollbackEarlier)
		}
		copy(e.t.X, from)
	}
	if res.Release {
		e.cand, e.saved, e.earlier = nil, nil, nil
	}
	return nil
}

// fold folds the parameters into the average of the decay's iterates:
// x̄ ← x̄ + (x − x̄)/n, in float64.
func (e *nativeEngine) fold(step int) error {
	if e.sf != nil || e.avg != nil {
		return fmt.Errorf("native engine: step %d: an average of the iterates with direction %T, which evaluates at its own point", step, e.peer)
	}
	if e.meanKeep != nil {
		return fmt.Errorf("native engine: step %d: a step between BeginAverage and EndAverage", step)
	}
	if e.meanN == 0 {
		e.mean = make([]float64, len(e.t.X))
	}
	e.meanN++
	w := 1 / float64(e.meanN)
	for i, x := range e.t.X {
		e.mean[i] += (float64(x) - e.mean[i]) * w
	}
	return nil
}

// BeginAverage makes the average of the decay's iterates the parameters,
// keeping the last iterate for EndAverage.
func (e *nativeEngine) BeginAverage() error {
	switch {
	case e.meanKeep != nil:
		return fmt.Errorf("native engine: BeginAverage twice without EndAverage")
	case e.meanN == 0:
		return fmt.Errorf("native engine: BeginAverage: no average of the iterates is kept")
	}
	e.meanKeep = append([]float32(nil), e.t.X...)
	for i, m := range e.mean {
		e.t.X[i] = float32(m)
	}
	return nil
}

// EndAverage keeps the average as the parameters (the average starting
// afresh), or puts the last iterate back.
func (e *nativeEngine) EndAverage(keep bool) error {
	if e.meanKeep == nil {
		return fmt.Errorf("native engine: EndAverage without BeginAverage")
	}
	if keep {
		e.mean, e.meanN = nil, 0
	} else {
		copy(e.t.X, e.meanKeep)
	}
	e.meanKeep = nil
	return nil
}

// EvaluateCells returns each example's cross-entropy and 1 where its
// prediction is right, 0 where not, at the parameters.
func (e *nativeEngine) EvaluateCells(sp *Split) (loss, acc []float64, err error) {
	if e.sf != nil || e.avg != nil {
		return nil, nil, fmt.Errorf("native engine: EvaluateCells with direction %T, which evaluates at its own point", e.peer)
	}
	loss, acc = make([]float64, 0, sp.N()), make([]float64, 0, sp.N())
	err = e.t.EvaluateExamples(sp.X, sp.Y, func(_ int, l float64, right bool) {
		loss = append(loss, l)
		if right {
			acc = append(acc, 1)
		} else {
			acc = append(acc, 0)
		}
	})
	return loss, acc, err
}

func (e *nativeEngine) ResetMomentum() error {
	e.t.ResetMomentum()
	if e.adam != nil {
		e.adam.Reset()
	}
	if e.peer != nil {
		e.peer.Reset()
	}
	return nil
}

// Evaluate evaluates the model where its method says: at the parameters,
// at Schedule-Free's x (Eval, then Train restores y) or at DoG's average.
func (e *nativeEngine) Evaluate(sp *Split) (loss, acc float64, err error) {
	switch {
	case e.sf != nil:
		if err := e.sf.Eval(e.t.X); err != nil {
			return 0, 0, err
		}
		loss, acc, err = e.t.Evaluate(sp.X, sp.Y)
		if terr := e.sf.Train(e.t.X); err == nil {
			err = terr
		}
		return loss, acc, err
	case e.avg != nil:
		e.keep = append(e.keep[:0], e.t.X...)
		if err := e.avg.Eval(e.t.X); err != nil {
			return 0, 0, err
		}
		loss, acc, err = e.t.Evaluate(sp.X, sp.Y)
		copy(e.t.X, e.keep)
		return loss, acc, err
	}
	return e.t.Evaluate(sp.X, sp.Y)
}

// nativeState is the engine's snapshot: the parameters (y for
// Schedule-Free), the QHM momentum, the direction's state and the copies
// of the parameters: the kept one (Saved), the candidate (Cand) and the
// one kept before (Earlier), each nil when there is none; and the average
// of the decay's iterates.
type nativeState struct {
	X, H    []float32
	Saved   []float32
	Cand    []float32
	Earlier []float32
	Mean    []float64 // the average of the decay's iterates, over MeanN of them
	MeanN   int
	Adam    []byte
	Peer    []byte // a peer method's direction
	Avg     []byte // DoG's average
}

func (e *nativeEngine) MarshalBinary() ([]byte, error) {
	if e.meanKeep != nil {
		return nil, fmt.Errorf("native engine: snapshot between BeginAverage and EndAverage")
	}
	st := nativeState{X: e.t.X, H: e.t.Momentum(), Saved: e.saved, Cand: e.cand, Earlier: e.earlier, Mean: e.mean, MeanN: e.meanN}
	var err error
	if e.adam != nil {
		if st.Adam, err = e.adam.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	if e.peer != nil {
		if st.Peer, err = e.peer.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	if e.avg != nil {
		if st.Avg, err = e.avg.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	err = gob.NewEncoder(&b).Encode(st)
	return b.Bytes(), err
}

func (e *nativeEngine) UnmarshalBinary(b []byte) error {
	var st nativeState
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&st); err != nil {
		return fmt.Errorf("native engine state: unreadable, the checkpoint is corrupt (%w)", err)
	}
	if len(st.X) != len(e.t.X) || len(st.H) != len(e.t.X) || (st.Saved != nil && len(st.Saved) != len(e.t.X)) ||
		(st.Cand != nil && len(st.Cand) != len(e.t.X)) || (st.Earlier != nil && len(st.Earlier) != len(e.t.X)) || (st.MeanN > 0) != (len(st.Mean) == len(e.t.X)) || st.MeanN < 0 {
		return fmt.Errorf("native engine state: %d parameters (%d momenta, %d kept, %d in a candidate, %d kept earlier, %d averaged over %d iterates), want %d",
			len(st.X), len(st.H), len(st.Saved), len(st.Cand), len(st.Earlier), len(st.Mean), st.MeanN, len(e.t.X))
	}
	// The direction's state first: on its error the parameters are left as
	// they were.
	if e.peer != nil {
		if err := e.peer.UnmarshalBinary(st.Peer); err != nil {
			return fmt.Errorf("native engine state: %w", err)
		}
		if e.peer.Len() != len(e.t.X) {
			return fmt.Errorf("native engine state: a direction of %d parameters, want %d", e.peer.Len(), len(e.t.X))
		}
	}
	if e.avg != nil {
		if err := e.avg.UnmarshalBinary(st.Avg); err != nil {
			return fmt.Errorf("native engine state: %w", err)
		}
	}
	copy(e.t.X, st.X)
	copy(e.t.Momentum(), st.H)
	e.saved, e.cand, e.earlier = st.Saved, st.Cand, st.Earlier // decoded afresh: nil when the snapshot has none
	e.mean, e.meanN, e.meanKeep = st.Mean, st.MeanN, nil
	if e.adam != nil {
		return e.adam.UnmarshalBinary(st.Adam)
	}
	return nil
}

// PlainStep is a QHM step at rate lr without a scheduler or statistics.
func (e *nativeEngine) PlainStep(b Batch, lr float64) (float64, error) {
	if e.peer != nil {
		return 0, fmt.Errorf("native engine: PlainStep makes a QHM step, not a peer method's")
	}
	e.gather(b.Idx)
	loss, _, err := e.t.Grad(e.xb, e.yb)
	if err != nil {
		return loss, err
	}
	return loss, e.t.Plain(lr)
}
