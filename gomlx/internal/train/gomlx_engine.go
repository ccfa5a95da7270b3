package train

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"sync"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/data"
	"github.com/salsaopt/salsa/direction"
	salsagomlx "github.com/salsaopt/salsa/gomlx"
	"github.com/salsaopt/salsa/gomlx/models"
	"github.com/salsaopt/salsa/schedule"
)

func init() { Engines["gomlx"] = newGoMLXEngine }

// MLPHidden are the hidden widths of --model mlp (784-512-512-10 on MNIST).
var MLPHidden = []int{512, 512}

// evalChunk is the number of examples evaluated per graph call.
const evalChunk = 1000

// AugmentPad is the zero padding of the random-crop augmentation.
const AugmentPad = 2

// BackendConfig is the Go backend's configuration: two executors run
// independent ops at once, which engine.md measured as the best setting on
// two cores (resnet20 513 → 402 ms/step).
const BackendConfig = "num_executors=2"

var (
	backendOnce sync.Once
	backend     compute.Backend
	backendErr  error
)

// Backend returns the process's Go backend (BackendConfig).
func Backend() (compute.Backend, error) {
	backendOnce.Do(func() { backend, backendErr = gobackend.New(BackendConfig) })
	return backend, backendErr
}

// gomlxEngine trains a model of package models on the Go backend.
type gomlxEngine struct {
	tr    *salsagomlx.Trainer
	p     *Plan
	train *Split
	bufs  map[[2]int]batchBuf // image input tensors by (examples, features), reused
	// Text: the training tokens cut into Batch streams (data.Batchify).
	streams []int32
	aug     []float32 // one augmented image
}

type batchBuf struct{ x, y *tensors.Tensor }

// checkSplit reports a split whose arrays do not match its dimensions.
func checkSplit(name string, s *Split) error {
	switch {
	case s == nil:
		return fmt.Errorf("%s split: nil", name)
	case s.Tokens != nil:
		for i, t := range s.Tokens {
			if t < 0 || t >= s.Labels {
				return fmt.Errorf("%s split: token %d at %d: must be in [0, %d)", name, t, i, s.Labels)
			}
		}
		return nil
	case s.Dim < 1 || s.Labels < 2:
		return fmt.Errorf("%s split: Dim = %d, Labels = %d: must be ≥ 1 and ≥ 2", name, s.Dim, s.Labels)
	case len(s.X) != s.N()*s.Dim:
		return fmt.Errorf("%s split: %d features for %d examples of %d", name, len(s.X), s.N(), s.Dim)
	case s.H > 0 && s.H*s.W*s.C != s.Dim:
		return fmt.Errorf("%s split: images %d×%d×%d for %d features", name, s.H, s.W, s.C, s.Dim)
	}
	for i, y := range s.Y {
		if y < 0 || int(y) >= s.Labels {
			return fmt.Errorf("%s split: label %d of example %d: must be in [0, %d)", name, y, i, s.Labels)
		}
	}
	return nil
}

// newGoMLXEngine builds the model of p.Options.Model, with weights drawn
// from the store's RNG seeded with p.Options.Seed (logreg starts at zero),
// and the direction of p.Direction.
func newGoMLXEngine(p *Plan, train *Split) (Engine, error) {
	if err := checkSplit("training", train); err != nil {
		return nil, err
	}
	mi, ok := Model(p.Options.Model)
	if !ok {
		return nil, fmt.Errorf("--model %s: unknown", p.Options.Model)
	}
	if mi.Text != (train.Tokens != nil) {
		return nil, fmt.Errorf("--model %s does not fit the data (text: %v)", p.Options.Model, train.Tokens != nil)
	}
	if mi.Conv && train.H == 0 {
		return nil, fmt.Errorf("--model %s needs images (H×W×C), the data has flat features", p.Options.Model)
	}
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(int64(p.Options.Seed)); err != nil {
		return nil, err
	}
	d := p.Direction
	// LR is the first value only: Trainer.Run sets α from the scheduler at
	// every step.
	cfg := salsagomlx.Config{LR: p.Options.LR0, WeightDecay: d.WeightDecay, DecayAll: d.DecayAll, ClipNorm: d.Clip}
	switch d.Kind {
	case "qhm":
		cfg.Beta, cfg.Nu = d.Momentum, d.Nu
		cfg.SearchAlongD = p.Schedule.SSLS.SearchAlong == schedule.AlongD
	case "adam":
		cfg.Direction, cfg.Beta1, cfg.Beta2, cfg.Eps = salsagomlx.Adam, d.AdamBeta1, d.AdamBeta2, d.AdamEps
	default:
		if !lrAware(d.Kind) {
			return nil, fmt.Errorf("direction %q: must be qhm, adam or a peer's", d.Kind)
		}
		// A peer's direction of package direction, run on the host between
		// the gradient graph and the next step; DoG is evaluated at its
		// polynomial average, Schedule-Free at x.
		cfg.Direction = salsagomlx.Host
		cfg.Host = &salsagomlx.HostConfig{
			New:          func(n int) (direction.LRAware[float32], error) { return newPeerDirection(d, n) },
			Average:      d.Kind == "dog",
			AverageGamma: direction.DefaultPolyGamma,
		}
	}
	be, err := Backend()
	if err != nil {
		return nil, err
	}
	e := &gomlxEngine{p: p, train: train, bufs: map[[2]int]batchBuf{}}
	var m salsagomlx.Model
	switch p.Options.Model {
	case "logreg":
		m = models.Logreg(train.Labels)
	case "mlp":
		m = models.MLP(MLPHidden, train.Labels)
	case "cnn":
		m = models.CNN(train.Labels)
	case "resnet20":
		m = models.ResNet20(train.Labels)
	case "resnet18":
		m = models.ResNet18(train.Labels)
	case "lstm", "lstm-paper":
		var rec *models.LSTM
		if p.Options.Model == "lstm" {
			rec = models.CharLSTM(train.Labels)
		} else {
			rec = models.PaperLSTM(train.Labels)
		}
		if e.streams, _, err = data.Batchify(train.Tokens, p.Options.Batch); err != nil {
			return nil, err
		}
		if e.tr, err = salsagomlx.NewRecurrent(be, store, rec, cfg); err != nil {
			return nil, err
		}
		return e, nil
	default:
		return nil, fmt.Errorf("--model %s: the gomlx engine has %v", p.Options.Model, modelNames())
	}
	if e.tr, err = salsagomlx.New(be, store, m, cfg); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *gomlxEngine) Name() string { return "gomlx" }

// StartEpoch zeroes a recurrent model's carried state.
func (e *gomlxEngine) StartEpoch(int) error { return e.tr.ResetState() }

// imageBuf returns the reused input tensors for n examples of sp.
func (e *gomlxEngine) imageBuf(n int, sp *Split) batchBuf {
	key := [2]int{n, sp.Dim}
	b, ok := e.bufs[key]
	if !ok {
		xs := shapes.Make(dtypes.Float32, n, sp.Dim)
		if sp.H > 0 {
			xs = shapes.Make(dtypes.Float32, n, sp.H, sp.W, sp.C)
		}
		b = batchBuf{tensors.FromShape(xs), tensors.FromShape(shapes.Make(dtypes.Int32, n))}
		e.bufs[key] = b
	}
	return b
}

// fill copies the examples idx of sp (or lo..lo+n when idx is nil) into b,
// each cropped and flipped at random when r is not nil.
func (e *gomlxEngine) fill(b batchBuf, sp *Split, idx []int, lo, n int, r *rand.Rand) error {
	d := sp.Dim
	ex := func(i int) int {
		if idx != nil {
			return idx[i]
		}
		return lo + i
	}
	if err := tensors.MutableFlatData(b.x, func(x []float32) {
		for i := 0; i < n; i++ {
			j := ex(i)
			if r != nil {
				data.AugmentCropFlip(x[i*d:(i+1)*d], sp.X[j*d:(j+1)*d], sp.H, sp.W, sp.C, AugmentPad, sp.Fill, r)
				continue
			}
			copy(x[i*d:(i+1)*d], sp.X[j*d:(j+1)*d])
		}
	}); err != nil {
		return err
	}
	return tensors.MutableFlatData(b.y, func(y []int32) {
		for i := 0; i < n; i++ {
			y[i] = sp.Y[ex(i)]
		}
	})
}

// textBuf returns the tensors of chunk k of the [batch][n] streams.
func (e *gomlxEngine) textBuf(streams []int32, k int) (batchBuf, error) {
	bs, bptt := e.p.Options.Batch, e.p.BPTT
	in, tg, T, err := data.LMChunk(streams, bs, bptt, k)
	if err != nil {
		return batchBuf{}, err
	}
	return batchBuf{tensors.FromFlatDataAndDimensions(in, bs, T), tensors.FromFlatDataAndDimensions(tg, bs, T)}, nil
}

// batch makes the inputs of a training step.
func (e *gomlxEngine) batch(b Batch) (batchBuf, error) {
	if e.streams != nil {
		return e.textBuf(e.streams, b.Chunk)
	}
	if len(b.Idx) == 0 {
		return batchBuf{}, fmt.Errorf("gomlx engine: empty batch")
	}
	for _, j := range b.Idx {
		if j < 0 || j >= e.train.N() {
			return batchBuf{}, fmt.Errorf("gomlx engine: example %d: must be in [0, %d)", j, e.train.N())
		}
	}
	var r *rand.Rand
	if e.p.Augment && e.train.H > 0 {
		// One stream per step: the same crops and flips when a run resumes.
		r = rand.New(rand.NewPCG(e.p.Options.Seed, uint64(b.Step)|1<<62))
	}
	buf := e.imageBuf(len(b.Idx), e.train)
	return buf, e.fill(buf, e.train, b.Idx, 0, len(b.Idx), r)
}

// Step makes one protocol step of s on the batch.
func (e *gomlxEngine) Step(s schedule.Scheduler, b Batch) (StepOut, error) {
	buf, err := e.batch(b)
	if err != nil {
		return StepOut{}, err
	}
	res, st, err := e.tr.Run(s, buf.x, buf.y)
	out := StepOut{Result: res, Loss: st.Loss, X1D: st.X1D, D2: st.D2, X2: st.X2, HasX2: st.HasX2}
	if dir, _ := e.tr.HostDirection(); dir != nil {
		out.StepSize = dir.EffectiveLR()
	}
	return out, err
}

// SetValidation gives the trainer the loss on sp, which a scheduler may ask
// for after a step (salsagomlx.Trainer.SetValLoss), evaluated as Evaluate
// does.
func (e *gomlxEngine) SetValidation(sp *Split) {
	e.tr.SetValLoss(func() (float64, error) {
		loss, _, err := e.Evaluate(sp)
		return loss, err
	})
}

// RefreshBatches is the number of training batches over which the
// batch-norm running statistics are recomputed at the evaluation point of
// Schedule-Free (x) and of DoG (its average) before an evaluation.
const RefreshBatches = 50

// refreshBatches yields the inputs of the first RefreshBatches batches of
// the training split in index order, without augmentation (one batch of
// all the examples when they make no full batch): the same batches at
// every evaluation, so that a resumed run refreshes as an uninterrupted one.
func (e *gomlxEngine) refreshBatches() iter.Seq[*tensors.Tensor] {
	if e.streams != nil {
		return nil // no batch norm in the language models
	}
	return func(yield func(*tensors.Tensor) bool) {
		bs := min(e.p.Options.Batch, e.train.N())
		nb := min(RefreshBatches, e.train.N()/bs)
		for k := range nb {
			b := e.imageBuf(bs, e.train)
			if err := e.fill(b, e.train, nil, k*bs, bs, nil); err != nil {
				panic(err) // the split was checked at the engine's creation
			}
			if !yield(b.x) {
				return
			}
		}
	}
}

// Evaluate returns the mean cross-entropy (without L2) and the accuracy on
// sp, summed in float64: images in chunks of 1000 examples; a text cut into
// Batch streams, evaluated chunk by chunk with the state carried from zero.
// A peer is evaluated where its method says (salsagomlx.Trainer.BeginEval:
// Schedule-Free at x, DoG at its average, with the batch-norm statistics
// recomputed there); the training parameters and statistics are restored
// after.
func (e *gomlxEngine) Evaluate(sp *Split) (loss, acc float64, err error) {
	if err := checkSplit("evaluation", sp); err != nil {
		return 0, 0, err
	}
	if err := e.tr.BeginEval(e.refreshBatches()); err != nil {
		return 0, 0, err
	}
	defer func() {
		if eerr := e.tr.EndEval(); eerr != nil {
			err = errors.Join(err, eerr)
		}
	}()
	return e.evaluate(sp)
}

func (e *gomlxEngine) evaluate(sp *Split) (loss, acc float64, err error) {
	var sum float64
	var correct, n int
	err = e.walk(sp, func(b batchBuf, state *tensors.Tensor) (*tensors.Tensor, error) {
		l, c, m, next, err := e.tr.EvaluateSequenceSums(b.x, b.y, state)
		sum, correct, n = sum+l, correct+c, n+m
		return next, err
	}, func(b batchBuf) error {
		l, c, _, err := e.tr.EvaluateSums(b.x, b.y)
		sum, correct = sum+l, correct+c
		return err
	})
	switch {
	case err != nil:
		return 0, 0, err
	case sp.Tokens == nil:
		n = sp.N()
	case n == 0:
		return 0, 0, fmt.Errorf("evaluation split: %d tokens make no chunk", sp.N())
	}
	return sum / float64(n), float64(correct) / float64(n), nil
}

// walk runs sp through the model as Evaluate does: a text cut into Batch
// streams, chunk by chunk with the state carried from zero (seq gets each
// chunk and the state it starts from, and returns the next one); images in
// chunks of evalChunk examples (img).
func (e *gomlxEngine) walk(sp *Split, seq func(b batchBuf, state *tensors.Tensor) (*tensors.Tensor, error), img func(b batchBuf) error) error {
	if sp.N() == 0 {
		return fmt.Errorf("evaluation split: no examples")
	}
	if sp.Tokens != nil {
		streams, sn, err := data.Batchify(sp.Tokens, e.p.Options.Batch)
		if err != nil {
			return fmt.Errorf("evaluation split: %w", err)
		}
		state, err := e.tr.ZeroState(e.p.Options.Batch)
		if err != nil {
			return err
		}
		for k := range data.LMChunks(sn, e.p.BPTT) {
			b, err := e.textBuf(streams, k)
			if err != nil {
				return err
			}
			next, err := seq(b, state)
			if err != nil {
				return err
			}
			state.FinalizeAll()
			state = next
		}
		state.FinalizeAll()
		return nil
	}
	if sp.Dim != e.train.Dim {
		return fmt.Errorf("evaluation split: Dim = %d: the model takes %d", sp.Dim, e.train.Dim)
	}
	for lo := 0; lo < sp.N(); lo += evalChunk {
		m := min(evalChunk, sp.N()-lo)
		b := e.imageBuf(m, sp)
		if err := e.fill(b, sp, nil, lo, m, nil); err != nil {
			return err
		}
		if err := img(b); err != nil {
			return err
		}
	}
	return nil
}

// BeginAverage makes the average of the decay's iterates the parameters,
// with the batch-norm statistics recomputed there over the refresh batches
// (salsagomlx.Trainer.BeginAverage).
func (e *gomlxEngine) BeginAverage() error { return e.tr.BeginAverage(e.refreshBatches()) }

// EndAverage keeps the average or puts the last iterate back.
func (e *gomlxEngine) EndAverage(keep bool) error { return e.tr.EndAverage(keep) }

// EvaluateCells evaluates sp as Evaluate does, at the parameters, and
// returns its cells: for images each example's cross-entropy and 1 where
// its prediction is right; for a text, each stream's chunk's mean
// cross-entropy and fraction of right predictions, chunk by chunk.
func (e *gomlxEngine) EvaluateCells(sp *Split) (loss, acc []float64, err error) {
	if err := checkSplit("evaluation", sp); err != nil {
		return nil, nil, err
	}
	if e.tr.EvalPoint() {
		return nil, nil, fmt.Errorf("EvaluateCells: the direction evaluates at its own point")
	}
	add := func(l, a []float64) { loss, acc = append(loss, l...), append(acc, a...) }
	err = e.walk(sp, func(b batchBuf, state *tensors.Tensor) (*tensors.Tensor, error) {
		l, a, next, err := e.tr.EvaluateSequenceRows(b.x, b.y, state)
		add(l, a)
		return next, err
	}, func(b batchBuf) error {
		l, a, err := e.tr.EvaluateRows(b.x, b.y)
		add(l, a)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return loss, acc, nil
}

func (e *gomlxEngine) MarshalBinary() ([]byte, error) { return e.tr.MarshalBinary() }
func (e *gomlxEngine) UnmarshalBinary(b []byte) error { return e.tr.UnmarshalBinary(b) }
func (e *gomlxEngine) ResetMomentum() error           { return e.tr.ResetMomentum() }

// PlainStep is the adapter's plain fused step at rate lr: no scheduler, no
// statistics returned to the host.
func (e *gomlxEngine) PlainStep(b Batch, lr float64) (float64, error) {
	buf, err := e.batch(b)
	if err != nil {
		return 0, err
	}
	if err := e.tr.SetLR(lr); err != nil {
		return 0, err
	}
	return e.tr.Step(buf.x, buf.y)
}
