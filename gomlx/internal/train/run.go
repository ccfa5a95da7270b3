// Package train runs a training job for the salsa command: the data, the
// epoch loop driving a schedule.Scheduler through an Engine, the run
// directory (epochs.csv, steps.csv.gz, events.csv, run.json, checkpoint,
// figures), resumption and the failure rules.
package train

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/salsaopt/salsa/data"
	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

// Engine trains one model. Implementations: the GoMLX adapter (any model)
// and the native fast path for linear models.
type Engine interface {
	Name() string
	// StartEpoch is called before the first step of each epoch (not when a
	// run resumes in the middle of one): a recurrent model's carried state
	// starts at zero.
	StartEpoch(epoch int) error
	// Step makes one protocol step of s on a batch. On an error the loss is
	// still reported if it was computed.
	Step(s schedule.Scheduler, b Batch) (StepOut, error)
	// Evaluate returns the mean cross-entropy (without L2) and the accuracy
	// (of next-token predictions, for a text).
	Evaluate(sp *Split) (loss, acc float64, err error)
	// MarshalBinary and UnmarshalBinary save and restore the parameters,
	// the direction's state, the RNG and a recurrent model's state bit for
	// bit.
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
	// ResetMomentum zeroes the direction's state, after a drop decided
	// between steps (w/ val).
	ResetMomentum() error
}

// valSetter is an engine whose Step can report the validation loss a
// scheduler asks for ([schedule.Result.NeedVal]), evaluated on the split
// given, as Evaluate does.
type valSetter interface {
	SetValidation(sp *Split)
}

// averager is an engine that keeps the average of the decay's iterates
// (schedule.TailConfig.Average), folding in the parameters after each step
// whose Result asks for it, and that can evaluate there: BeginAverage
// makes the average the parameters, EndAverage keeps it or puts the last
// iterate back, and EvaluateCells returns the cells of the paired test at
// the parameters (salsagomlx.Trainer.BeginAverage).
type averager interface {
	BeginAverage() error
	EndAverage(keep bool) error
	EvaluateCells(sp *Split) (loss, acc []float64, err error)
}

// pickAverage ends a run whose scheduler averages the decay's iterates: it
// evaluates the validation split's cells at the last iterate and at the
// average, and ends at the one s picks (schedule.Tail.PickAverage): on a
// text the gain of a cell is its mean cross-entropy at the last iterate
// minus the one at the average, on images the difference of their right
// predictions.
func pickAverage(s schedule.Averager, e averager, val *Split, text bool) (schedule.Event, error) {
	l0, a0, err := e.EvaluateCells(val)
	if err != nil {
		return schedule.Event{}, fmt.Errorf("the average of the decay: the last iterate's validation: %w", err)
	}
	if err := e.BeginAverage(); err != nil {
		return schedule.Event{}, fmt.Errorf("the average of the decay: %w", err)
	}
	l1, a1, err := e.EvaluateCells(val)
	if err == nil && (len(l1) != len(l0) || len(a1) != len(a0) || len(l0) != len(a0)) {
		err = fmt.Errorf("%d and %d cells", len(l0), len(l1))
	}
	if err != nil {
		return schedule.Event{}, errors.Join(fmt.Errorf("the average of the decay: its validation: %w", err), e.EndAverage(false))
	}
	gain, metric := make([]float64, len(l0)), "accuracy"
	for i := range gain {
		if text {
			gain[i] = l0[i] - l1[i]
		} else {
			gain[i] = a1[i] - a0[i]
		}
	}
	if text {
		metric = "loss"
	}
	ev, err := s.PickAverage(gain, metric)
	if err != nil {
		return ev, errors.Join(err, e.EndAverage(false))
	}
	return ev, e.EndAverage(ev.Accept)
}

// Batch says which training data a step uses.
type Batch struct {
	Idx   []int // classifiers: the examples
	Chunk int   // language models: the BPTT chunk of the epoch, from 0
	Epoch int   // 1-based
	Step  int   // the step k, 1-based: seeds the augmentation
}

// StepOut is what an engine reports of one step.
type StepOut struct {
	schedule.Result
	Loss    float64 // f_ξk(x_k) + 0.5·wd·‖x_k‖²
	X1D, D2 float64 // ⟨x_{k+1}, d_k⟩, ‖d_k‖²
	// StepSize is a peer's own step of this update
	// (direction.LRAware.EffectiveLR: Prodigy's α_k·d_k, DoG's α_k·η_t, ...),
	// which steps.csv.gz logs; 0 for the other methods.
	StepSize float64
	// X2 is ‖x_{k+1}‖², measured (HasX2) at the steps the scheduler asks
	// for it (schedule.NormAsker), which steps.csv.gz logs.
	X2    float64
	HasX2 bool
}

// EngineFactory builds an engine for a plan on the training split.
type EngineFactory func(p *Plan, train *Split) (Engine, error)

// Engines maps engine names to factories; each engine's file registers
// itself in an init function.
var Engines = map[string]EngineFactory{}

// newEngine builds the engine [ChooseEngine] picks for *p on the training
// split, and records its name in p.Options.Engine.
func newEngine(p *Plan, train *Split) (Engine, error) {
	name, err := ChooseEngine(p)
	if err != nil {
		return nil, err
	}
	p.Options.Engine = name
	return Engines[name](p, train)
}

// ChooseEngine picks the engine for a plan: "auto" is native for a linear
// model when it is registered and the plan needs nothing it lacks (weight
// decay on the weights only, gradient clipping), else gomlx.
func ChooseEngine(p *Plan) (string, error) {
	e := p.Options.Engine
	if e == "" || e == "auto" {
		e = "gomlx"
		if p.Options.Model == "logreg" && Engines["native"] != nil && p.Direction.DecayAll && p.Direction.Clip == 0 {
			e = "native"
		}
	}
	if Engines[e] == nil {
		return "", fmt.Errorf("--engine %s: must be auto, gomlx or native", e)
	}
	if e == "native" && p.Options.Model != "logreg" {
		return "", fmt.Errorf("--engine native: only --model logreg has a native engine (got %s)", p.Options.Model)
	}
	if e == "native" && !p.Direction.DecayAll {
		return "", errors.New("--engine native decays every parameter: --set decay=weights needs --engine gomlx")
	}
	if e == "native" && p.Direction.Clip != 0 {
		return "", fmt.Errorf("--engine native does not clip the gradient: --set clip=%v needs --engine gomlx", p.Direction.Clip)
	}
	return e, nil
}

// EpochRow is one line of epochs.csv.
type EpochRow struct {
	Epoch, Steps                     int
	LR, TrainLoss, TestLoss, TestAcc float64
	TestPPL                          float64 // language models: exp(TestLoss); NaN (empty) otherwise
	ValLoss                          float64 // -val methods and Options.HoldOut: the validation loss; NaN (empty) otherwise
	ValAcc                           float64 // the validation accuracy where ValLoss is; NaN (empty) otherwise
	Switched                         bool
	Drops                            int
	Seconds                          float64
}

// EpochsHeader is the header of epochs.csv.
const EpochsHeader = "epoch,steps,lr,train_loss,test_loss,test_acc,test_ppl,val_loss,switched,drops,seconds,val_acc"

func (r EpochRow) format() string {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	f := trace.FormatFloat
	opt := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return f(v)
	}
	return fmt.Sprintf("%d,%d,%s,%s,%s,%s,%s,%s,%d,%d,%s,%s", r.Epoch, r.Steps, f(r.LR), f(r.TrainLoss), f(r.TestLoss),
		f(r.TestAcc), opt(r.TestPPL), opt(r.ValLoss), b(r.Switched), r.Drops, f(r.Seconds), opt(r.ValAcc))
}

// Checkpoint is what --resume restarts from. It is written atomically at
// the end of each epoch and when a run stops early (--max-steps); a NaN
// stops the run without writing one.
type Checkpoint struct {
	Version   int
	Plan      Plan
	Step      int // completed steps
	Saved     int // the step of the last checkpoint written
	Epoch     int // the epoch in progress (1-based) or the next one
	Pos       int // steps done in Epoch
	LossSum   float64
	Seconds   float64
	Drops     int
	Switched  bool
	Scheduler []byte
	Engine    []byte
	// Pending are the steps and events of the epoch in progress: the log
	// files hold those of the completed epochs (Logged bytes of each), and
	// the rows of an epoch are appended when it ends. A checkpoint thus
	// holds at most one epoch of rows, and an epoch's save writes only its
	// own rows: the I/O of a run grows linearly with its length.
	Pending       []trace.Row
	PendingEvents []schedule.Event
	Logged        LogSizes
	Epochs        []EpochRow
	NEvents       int // events of the whole run
	// StepSize: steps.csv.gz has the step_size column (trace.StepSizeHeader),
	// as every run of a peer whose step size is partly its own has from the
	// start; false in the checkpoints of runs started before salsa wrote
	// it, which go on without it.
	StepSize bool
	// X2: steps.csv.gz has the x2 column (trace.X2Header), as every run
	// whose scheduler reads ‖x_{k+1}‖² (schedule.NormAsker) has from the
	// start, so that salsa replay can replay it; false in the checkpoints
	// of runs started before salsa wrote it, which go on without it.
	X2 bool
}

// clone returns a copy of ck that shares no slice Run appends to or
// replaces with it: Run's writes to the copy never reach ck. The plan's
// slices are shared (Run reads them only), and so are the scheduler's and
// the engine's blobs (Run replaces them whole).
func (ck *Checkpoint) clone() *Checkpoint {
	c := *ck
	c.Pending = slices.Clone(ck.Pending)
	c.PendingEvents = slices.Clone(ck.PendingEvents)
	c.Epochs = slices.Clone(ck.Epochs)
	return &c
}

// LogSizes are the sizes in bytes of steps.csv.gz, events.csv and
// epochs.csv that hold the completed epochs; bytes beyond them (the partial
// epoch a stopped run wrote, for plotting) are replaced when the run goes on.
type LogSizes struct{ Steps, Events, Epochs int64 }

const checkpointVersion = 3

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// RunJSON is the content of a run's run.json: the plan (the options as
// given, the resolved schedule and direction, the split sizes), the engine,
// the build's versions and the SHA-256 of every data file read.
type RunJSON struct {
	Plan     *Plan             `json:"plan"`
	Engine   string            `json:"engine"`
	Versions map[string]string `json:"versions"`
	Data     []data.FileDigest `json:"data,omitempty"`
}

// writeRunJSON writes a run's run.json.
func writeRunJSON(out string, rj RunJSON) error {
	b, err := json.MarshalIndent(rj, "", "  ")
	if err != nil {
		return fmt.Errorf("run.json: %w", err)
	}
	return writeAtomic(filepath.Join(out, "run.json"), append(b, '\n'))
}

// setRunJSONPlan puts a resumed run's plan (its new length) in its
// run.json; the engine, versions and data stay those the run recorded.
func setRunJSONPlan(out string, p *Plan) error {
	b, err := os.ReadFile(filepath.Join(out, "run.json"))
	if err != nil {
		return err
	}
	var rj RunJSON
	if err := json.Unmarshal(b, &rj); err != nil {
		return fmt.Errorf("run.json: %w", err)
	}
	rj.Plan = p
	return writeRunJSON(out, rj)
}

// Versions reports the Go and module versions the binary was built with.
func Versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v["salsa"] = bi.Main.Version
		for _, d := range bi.Deps {
			if strings.HasPrefix(d.Path, "github.com/gomlx/") {
				v[d.Path] = d.Version
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "GOEXPERIMENT" {
				v["goexperiment"] = s.Value
			}
		}
	}
	return v
}

// Result is the end state of a run.
type Result struct {
	Epochs            int
	Steps             int
	LR                float64
	TestLoss, TestAcc float64
	TestPPL           float64 // language models: exp(TestLoss); NaN otherwise
	Seconds           float64
	Stopped           bool // stopped by --max-steps or ctx before the last epoch, checkpoint written
	Interrupted       bool // stopped because ctx was done (a signal)
}

// Run trains according to p from scratch, or, when from is not nil, from
// that checkpoint of the run in out (ReadCheckpoint; p may give the run more
// epochs than from.Plan, and run.json is then updated). progress, if not
// nil, is called after each step. Run changes neither *p nor *from: it
// works on copies (p may point into from, as &from.Plan).
//
// When ctx is done (Ctrl-C), Run finishes the step in progress, writes the
// checkpoint and the logs, and returns a Result with Stopped and
// Interrupted set.
func Run(ctx context.Context, p *Plan, out string, from *Checkpoint, maxSteps int, train, val, test *Split, progress func(epoch, pos int, res schedule.Result, loss float64), log io.Writer) (*Result, error) {
	if train == nil || test == nil {
		return nil, errors.New("train: the dataset needs a training and a test split")
	}
	if p == nil {
		return nil, errors.New("train: Run: nil plan")
	}
	q := *p // the engine chosen is recorded in the copy, not the caller's plan
	p = &q
	eng, err := newEngine(p, train)
	if err != nil {
		return nil, err
	}
	// the plan's schedule is what ForMethod fixed when the plan was made
	// (a checkpoint's may predate a setting the method fixes now)
	sched, err := schedule.Build(p.Scheduler, p.Schedule)
	if err != nil {
		return nil, err
	}
	if _, ok := sched.(validator); ok && val == nil {
		return nil, fmt.Errorf("--method %s steps on a validation loss: the data has no validation split", p.Options.Method)
	}
	ck := &Checkpoint{Version: checkpointVersion, Plan: *p, Epoch: 1, StepSize: p.LogsStepSize(), X2: schedule.AsksNorm(sched)}
	if ck.StepSize && ck.X2 {
		return nil, fmt.Errorf("--method %s: steps.csv.gz has one seventh column, and this run would log both step_size and x2", p.Options.Method)
	}
	if from != nil {
		ck = from.clone()
		if p.Options.Epochs < len(ck.Epochs) {
			return nil, fmt.Errorf("--resume %s: --epochs %d: the run has completed %d epochs", out, p.Options.Epochs, len(ck.Epochs))
		}
		if ck.Plan.Options.Epochs != p.Options.Epochs { // --resume --epochs N: the run's new length
			ck.Plan.Options.Epochs = p.Options.Epochs
			if err := setRunJSONPlan(out, &ck.Plan); err != nil {
				return nil, fmt.Errorf("--resume %s: %w", out, err)
			}
		}
		if sched, err = schedule.Restore(ck.Scheduler); err != nil {
			return nil, fmt.Errorf("--resume %s: %w", out, err)
		}
		for name, n := range map[string]int64{"steps.csv.gz": ck.Logged.Steps, "events.csv": ck.Logged.Events, "epochs.csv": ck.Logged.Epochs} {
			if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() < n {
				return nil, fmt.Errorf("--resume %s: %s has %d bytes, the checkpoint's epochs need %d: the file was changed or removed", out, name, size(st), n)
			}
		}
		if err := eng.UnmarshalBinary(ck.Engine); err != nil {
			return nil, fmt.Errorf("--resume %s: %w", out, err)
		}
	} else {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		if err := writeRunJSON(out, RunJSON{Plan: p, Engine: p.Options.Engine, Versions: Versions(), Data: p.Data}); err != nil {
			return nil, err
		}
	}
	if schedule.AsksVal(sched) {
		// salsa-probe with probe_val=1: the engine evaluates the validation
		// split when a step asks
		vs, ok := eng.(valSetter)
		switch {
		case val == nil:
			return nil, fmt.Errorf("--method %s with --set probe_val=1 asks for validation losses: the data has no validation split (on images salsa train holds out --set val_fraction, salsa compare --hold-out)", p.Options.Method)
		case !ok:
			return nil, fmt.Errorf("--method %s with --set probe_val=1: the %s engine cannot evaluate a validation loss between steps", p.Options.Method, eng.Name())
		}
		vs.SetValidation(val)
	}
	var avg schedule.Averager
	if schedule.Averages(sched) {
		avg = sched.(schedule.Averager)
		// salsa-probe: the engine keeps the average of the decay's
		// iterates, picked on the validation split at the end
		_, ok := eng.(averager)
		switch {
		case val == nil:
			return nil, fmt.Errorf("--method %s averages the decay's iterates and picks the average on a validation split: the data has none (on images salsa train holds out --set val_fraction, salsa compare --hold-out)", p.Options.Method)
		case !ok:
			return nil, fmt.Errorf("--method %s averages the decay's iterates: the %s engine cannot keep the average", p.Options.Method, eng.Name())
		}
	}
	// save writes the logs and the checkpoint; at an epoch's end (epoch !=
	// nil) the epoch's rows become part of the logs for good.
	save := func(epoch *EpochRow) error {
		ck.Saved = ck.Step
		var err error
		if ck.Scheduler, err = sched.MarshalBinary(); err != nil {
			return err
		}
		if ck.Engine, err = eng.MarshalBinary(); err != nil {
			return err
		}
		sizes, err := appendLogs(out, ck, epoch)
		if err != nil {
			return err
		}
		if epoch != nil {
			ck.Logged, ck.Pending, ck.PendingEvents = sizes, nil, nil
		}
		var buf bytes.Buffer
		buf.Grow(len(ck.Engine) + len(ck.Scheduler) + 1<<16) // one allocation for the blobs, not a doubling
		if err := gob.NewEncoder(&buf).Encode(ck); err != nil {
			return err
		}
		return writeAtomic(filepath.Join(out, "checkpoint.gob"), buf.Bytes())
	}
	start := time.Now().Add(-time.Duration(ck.Seconds * float64(time.Second)))
	spe := p.StepsPerEpoch
	text := train.Tokens != nil
	idx := make([]int, 0, p.Options.Batch)
	for ck.Epoch <= p.Options.Epochs {
		var perm []int
		if !text {
			perm = Perm(p.Options.Seed, ck.Epoch, train.N())
		}
		if ck.Pos == 0 {
			if err := eng.StartEpoch(ck.Epoch); err != nil {
				return nil, err
			}
		}
		for ; ck.Pos < spe; ck.Pos++ {
			interrupted := ctx.Err() != nil
			if interrupted || maxSteps > 0 && ck.Step >= maxSteps {
				ck.Seconds = time.Since(start).Seconds()
				if err := save(nil); err != nil {
					return nil, err
				}
				return &Result{Epochs: ck.Epoch - 1, Steps: ck.Step, LR: sched.LR(), Seconds: ck.Seconds, Stopped: true,
					Interrupted: interrupted}, nil
			}
			k := ck.Step + 1
			b := Batch{Chunk: ck.Pos, Epoch: ck.Epoch, Step: k}
			if !text {
				lo := ck.Pos * p.Options.Batch
				idx = append(idx[:0], perm[lo:min(lo+p.Options.Batch, len(perm))]...)
				b.Idx = idx
			}
			st, err := eng.Step(sched, b)
			if err != nil {
				sched.Abort()
				return nil, stepFailure(out, ck, k, st.Loss, err)
			}
			ck.Step = k
			ck.LossSum += st.Loss
			ck.Pending = append(ck.Pending, trace.Row{Step: k, LR: st.LR, Loss: st.Loss, X1D: st.X1D, D2: st.D2, Eta: st.Eta, HasEta: st.Searched,
				StepSize: st.StepSize, HasStepSize: ck.StepSize, X2: st.X2, HasX2: ck.X2 && st.HasX2})
			ck.count(st.Events)
			if progress != nil {
				progress(ck.Epoch, ck.Pos+1, st.Result, st.Loss)
			}
		}
		// End of the budget: the pick between the average of the decay's
		// iterates and the last iterate (salsa-probe).
		if avg != nil && ck.Epoch == p.Options.Epochs {
			ev, err := pickAverage(avg, eng.(averager), val, text)
			if err != nil {
				return nil, fmt.Errorf("epoch %d: %w", ck.Epoch, err)
			}
			ck.count([]schedule.Event{ev})
			if log != nil {
				what := "the last iterate kept"
				if ev.Accept {
					what = "the average kept"
				}
				fmt.Fprintf(log, "step %d: the average of the decay's iterates against the last iterate on %d validation cells (%s): z = %.3g, %s\n",
					ev.Step, ev.Count, ev.Reason, ev.Z, what)
			}
		}
		// End of epoch: the validation check of a -val method, the test
		// evaluation, and a checkpoint.
		valLoss, valAcc := math.NaN(), math.NaN()
		if v, ok := sched.(validator); ok && val != nil {
			vl, va, err := eng.Evaluate(val)
			if err != nil {
				return nil, err
			}
			valLoss, valAcc = vl, va
			res, err := v.Validate(vl)
			if err != nil {
				return nil, fmt.Errorf("epoch %d: validation: %w", ck.Epoch, err)
			}
			if res.ResetMomentum {
				if err := eng.ResetMomentum(); err != nil {
					return nil, err
				}
			}
			ck.count(res.Events)
		} else if val != nil && p.Options.HoldOut > 0 {
			if valLoss, valAcc, err = eng.Evaluate(val); err != nil {
				return nil, err
			}
		}
		tl, ta, err := eng.Evaluate(test)
		if err != nil {
			return nil, err
		}
		ppl := math.NaN()
		if text {
			ppl = math.Exp(tl)
		}
		ck.Seconds = time.Since(start).Seconds()
		r := EpochRow{Epoch: ck.Epoch, Steps: ck.Step, LR: sched.LR(), TrainLoss: ck.LossSum / float64(spe),
			TestLoss: tl, TestAcc: ta, TestPPL: ppl, ValLoss: valLoss, ValAcc: valAcc, Switched: ck.Switched, Drops: ck.Drops, Seconds: ck.Seconds}
		ck.Epochs = append(ck.Epochs, r)
		ck.Epoch, ck.Pos, ck.LossSum = ck.Epoch+1, 0, 0
		if err := save(&r); err != nil {
			return nil, err
		}
		if log != nil {
			metric := fmt.Sprintf("test_acc=%.4f", r.TestAcc)
			if text {
				metric = fmt.Sprintf("test_ppl=%.3f", r.TestPPL)
			}
			fmt.Fprintf(log, "epoch %d/%d: lr=%.4g train_loss=%.4f test_loss=%.4f %s drops=%d switched=%v %.1fs\n",
				r.Epoch, p.Options.Epochs, r.LR, r.TrainLoss, r.TestLoss, metric, r.Drops, r.Switched, r.Seconds)
		}
	}
	if len(ck.Epochs) == 0 {
		return nil, fmt.Errorf("no epoch completed")
	}
	last := ck.Epochs[len(ck.Epochs)-1]
	return &Result{Epochs: last.Epoch, Steps: ck.Step, LR: sched.LR(), TestLoss: last.TestLoss, TestAcc: last.TestAcc,
		TestPPL: last.TestPPL, Seconds: ck.Seconds}, nil
}

// count records drops and switches for epochs.csv.
func (ck *Checkpoint) count(evs []schedule.Event) {
	ck.PendingEvents = append(ck.PendingEvents, evs...)
	ck.NEvents += len(evs)
	for _, e := range evs {
		switch e.Kind {
		case schedule.KindDrop:
			ck.Drops++
		case schedule.KindSwitch:
			ck.Switched = true
		}
	}
}

// stepFailure writes the logs of the steps made before step k failed
// (epochs.csv, steps.csv.gz, events.csv: the blow-up can be plotted), leaves
// checkpoint.gob as it was, and returns an error that names the step, the
// files that exist and what to try.
func stepFailure(out string, ck *Checkpoint, k int, loss float64, err error) error {
	const advice = ". Try a smaller --lr0, or another --method"
	what, hint := err.Error(), ""
	switch {
	case math.IsNaN(loss) || math.IsInf(loss, 0):
		what, hint = fmt.Sprintf("the training loss is %v", loss), advice
	case errors.Is(err, schedule.ErrNonFinite) || errors.Is(err, direction.ErrNonFinite):
		// the loss was finite, but the update or its statistics overflowed
		hint = ". The parameters or the step overflowed" + advice
	}
	logs := "the logs of the steps before it are in " + out + " (salsa plot --run " + out + ")"
	if _, werr := appendLogs(out, ck, nil); werr != nil {
		logs = "writing the logs failed too: " + werr.Error()
	}
	ckpt := "no checkpoint was written before it (the first is written at the end of epoch 1)"
	if _, serr := os.Stat(filepath.Join(out, "checkpoint.gob")); serr == nil {
		ckpt = fmt.Sprintf("the checkpoint of step %d in %s is intact (salsa train --resume --out %s)", ck.Saved, out, out)
	}
	return fmt.Errorf("step %d (epoch %d): %s: stopping; %s; %s%s", k, ck.Epoch, what, logs, ckpt, hint)
}

// appendLogs cuts steps.csv.gz, events.csv and epochs.csv back to the
// completed epochs (ck.Logged) and appends the pending steps and events and,
// at an epoch's end, the epoch's row. steps.csv.gz gets one gzip member per
// epoch (gzip readers read the members as one stream), so the files of a
// resumed run equal those of an uninterrupted one byte for byte. It returns
// the sizes after the append. With ck.StepSize steps.csv.gz has the
// step_size column (trace.StepSizeHeader), with ck.X2 the x2 column
// (trace.X2Header).
func appendLogs(out string, ck *Checkpoint, epoch *EpochRow) (LogSizes, error) {
	var sizes LogSizes
	var raw bytes.Buffer
	header, appendRow := trace.TraceHeader, trace.AppendRow
	switch {
	case ck.StepSize:
		header, appendRow = trace.StepSizeHeader, trace.AppendStepSizeRow
	case ck.X2:
		header, appendRow = trace.X2Header, trace.AppendX2Row
	}
	if ck.Logged.Steps == 0 {
		raw.WriteString(header + "\n")
	}
	var line []byte
	for _, r := range ck.Pending {
		line = append(appendRow(line[:0], r), '\n')
		raw.Write(line)
	}
	var steps bytes.Buffer
	if raw.Len() > 0 {
		zw := gzip.NewWriter(&steps)
		_, werr := zw.Write(raw.Bytes())
		if err := errors.Join(werr, zw.Close()); err != nil {
			return sizes, err
		}
	}
	var events bytes.Buffer
	if err := trace.WriteEvents(&events, ck.PendingEvents); err != nil {
		return sizes, err
	}
	ev := events.Bytes()
	if ck.Logged.Events > 0 {
		ev = ev[len(trace.EventsHeader)+1:]
	}
	var ep []byte
	if ck.Logged.Epochs == 0 {
		ep = []byte(EpochsHeader + "\n")
	}
	if epoch != nil {
		ep = append(ep, epoch.format()+"\n"...)
	}
	var err error
	if sizes.Steps, err = appendAt(filepath.Join(out, "steps.csv.gz"), ck.Logged.Steps, steps.Bytes()); err != nil {
		return sizes, err
	}
	if sizes.Events, err = appendAt(filepath.Join(out, "events.csv"), ck.Logged.Events, ev); err != nil {
		return sizes, err
	}
	if sizes.Epochs, err = appendAt(filepath.Join(out, "epochs.csv"), ck.Logged.Epochs, ep); err != nil {
		return sizes, err
	}
	return sizes, nil
}

// size is a file's size, 0 when there is none.
func size(st os.FileInfo) int64 {
	if st == nil {
		return 0
	}
	return st.Size()
}

// appendAt cuts the file at path to off bytes, appends b and returns the
// new size. A file shorter than off was changed by someone else: an error.
func appendAt(path string, off int64, b []byte) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err == nil && st.Size() < off {
		err = fmt.Errorf("%s has %d bytes, the checkpoint's epochs need %d: the file was changed", path, st.Size(), off)
	}
	if err == nil {
		err = f.Truncate(off)
	}
	if err == nil {
		_, err = f.WriteAt(b, off)
	}
	return off + int64(len(b)), errors.Join(err, f.Close())
}

// CheckNoStrayLogs, for a run directory dir that its caller found without
// checkpoint.gob, returns an error when dir holds the logs of completed
// epochs (epochs.csv with a row), as a run copied without its checkpoint
// does: training there would cut those logs back to nothing, and without
// the checkpoint the run can be neither resumed nor checked against the
// settings asked for.
func CheckNoStrayLogs(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "epochs.csv"))
	if err != nil {
		return nil // no logs: nothing to lose
	}
	if rows := bytes.Count(b, []byte("\n")) - 1; rows > 0 {
		return fmt.Errorf("%s holds the logs of %d epochs (epochs.csv) but no checkpoint.gob: training there would overwrite them, and the run cannot be resumed without its checkpoint; restore checkpoint.gob, or remove the directory to train the run again", dir, rows)
	}
	return nil
}

// ReadCheckpoint reads the checkpoint of the run in dir.
func ReadCheckpoint(dir string) (*Checkpoint, error) {
	path := filepath.Join(dir, "checkpoint.gob")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err // names the path
	}
	ck := new(Checkpoint)
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(ck); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if ck.Version != checkpointVersion {
		return nil, fmt.Errorf("%s: checkpoint version %d: this build reads %d", path, ck.Version, checkpointVersion)
	}
	return ck, nil
}
