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
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/salsaopt/salsa/data"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

// Methods lists the --method values.
var Methods = []string{"salsa", "sasa+", "sasa", "ssls", "slope", "shb-hand", "adam-warmup", "salsa-val", "sasa+-val"}

// Options is everything a run depends on. It is saved in run.json and in the
// checkpoint, so that --resume continues the same run.
type Options struct {
	Dataset string  `json:"dataset"`
	Model   string  `json:"model"`
	Method  string  `json:"method"`
	Preset  string  `json:"preset"`
	LR0     float64 `json:"lr0"`
	Epochs  int     `json:"epochs"`
	Batch   int     `json:"batch"`
	Seed    uint64  `json:"seed"`
	Drops   []int   `json:"drops,omitempty"` // shb-hand: cut after these epochs
	Engine  string  `json:"engine"`          // auto, gomlx or native
	Label   string  `json:"label,omitempty"`
	// Sets are the --set key=value pairs, in order: direction keys
	// (momentum, nu, wd, adam_beta1, adam_beta2, adam_eps, warmup_epochs,
	// val_fraction) and schedule.Keys().
	Sets [][2]string `json:"sets,omitempty"`
}

// Direction is the resolved direction configuration.
type Direction struct {
	Kind        string  `json:"kind"` // "qhm" or "adam"
	Momentum    float64 `json:"momentum"`
	Nu          float64 `json:"nu"`
	WeightDecay float64 `json:"weight_decay"`
	AdamBeta1   float64 `json:"adam_beta1,omitempty"`
	AdamBeta2   float64 `json:"adam_beta2,omitempty"`
	AdamEps     float64 `json:"adam_eps,omitempty"`
}

// Plan is Options resolved against the data: what actually runs.
type Plan struct {
	Options       Options         `json:"options"`
	Scheduler     string          `json:"scheduler"` // the schedule method
	Schedule      schedule.Config `json:"schedule"`
	Direction     Direction       `json:"direction"`
	NTrain        int             `json:"n_train"`
	NVal          int             `json:"n_val"`
	NTest         int             `json:"n_test"`
	StepsPerEpoch int             `json:"steps_per_epoch"`
	WarmupEpochs  float64         `json:"warmup_epochs,omitempty"`
	ValFraction   float64         `json:"val_fraction,omitempty"`
}

// Split is a set of examples as flat float32 features and int32 labels.
type Split struct {
	X      []float32 // N×Dim
	Y      []int32
	Dim    int
	Labels int
}

// N is the number of examples.
func (s *Split) N() int { return len(s.Y) }

// Engine trains one model. Implementations: the GoMLX adapter (any model)
// and the native fast path for linear models.
type Engine interface {
	Name() string
	// Step makes one protocol step of s on the training examples idx. On an
	// error the loss is still reported if it was computed.
	Step(s schedule.Scheduler, idx []int) (StepOut, error)
	// Evaluate returns the mean cross-entropy (without L2) and the accuracy.
	Evaluate(sp *Split) (loss, acc float64, err error)
	// MarshalBinary and UnmarshalBinary save and restore the parameters and
	// the direction's state bit for bit.
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
	// ResetMomentum zeroes the direction's state, after a drop decided
	// between steps (w/ val).
	ResetMomentum() error
}

// StepOut is what an engine reports of one step.
type StepOut struct {
	schedule.Result
	Loss    float64 // f_ξk(x_k) + 0.5·wd·‖x_k‖²
	X1D, D2 float64 // ⟨x_{k+1}, d_k⟩, ‖d_k‖²
}

// EngineFactory builds an engine for a plan on the training split.
type EngineFactory func(p *Plan, train *Split) (Engine, error)

// Engines maps engine names to factories; the CLI registers them.
var Engines = map[string]EngineFactory{}

// ChooseEngine picks the engine for a plan: "auto" is native for a linear
// model when it is registered, else gomlx.
func ChooseEngine(p *Plan) (string, error) {
	e := p.Options.Engine
	if e == "" || e == "auto" {
		e = "gomlx"
		if p.Options.Model == "logreg" && Engines["native"] != nil {
			e = "native"
		}
	}
	if Engines[e] == nil {
		return "", fmt.Errorf("--engine %s: must be auto, gomlx or native", e)
	}
	if e == "native" && p.Options.Model != "logreg" {
		return "", fmt.Errorf("--engine native: only --model logreg has a native engine (got %s)", p.Options.Model)
	}
	return e, nil
}

// Validate checks the options and names the flag, the value and what is
// allowed.
func (o *Options) Validate() error {
	switch {
	case !slices.Contains([]string{"mnist", "fashion-mnist", "cifar10"}, o.Dataset):
		return fmt.Errorf("--dataset %s: must be mnist, fashion-mnist or cifar10", o.Dataset)
	case !slices.Contains([]string{"logreg", "mlp"}, o.Model):
		return fmt.Errorf("--model %s: must be logreg or mlp", o.Model)
	case !slices.Contains(Methods, o.Method):
		return fmt.Errorf("--method %s: must be one of %s", o.Method, strings.Join(Methods, ", "))
	case o.Preset != "paper" && o.Preset != "statopt":
		return fmt.Errorf("--preset %s: must be paper or statopt", o.Preset)
	case !(o.LR0 > 0) || math.IsInf(o.LR0, 0):
		return fmt.Errorf("--lr0 %v: must be finite and > 0", o.LR0)
	case o.Epochs < 1:
		return fmt.Errorf("--epochs %d: must be ≥ 1", o.Epochs)
	case o.Batch < 1:
		return fmt.Errorf("--batch %d: must be ≥ 1", o.Batch)
	}
	for i, d := range o.Drops {
		if d < 1 || d >= o.Epochs || (i > 0 && d <= o.Drops[i-1]) {
			return fmt.Errorf("--drops %v: epochs must be strictly increasing in [1, %d)", o.Drops, o.Epochs)
		}
	}
	if len(o.Drops) > 0 && o.Method != "shb-hand" {
		return fmt.Errorf("--drops applies to --method shb-hand only (got %s)", o.Method)
	}
	return nil
}

// direction keys of --set, with their defaults.
var directionKeys = map[string]string{
	"momentum": "β of the QHM direction (default 0.9)", "nu": "ν of the QHM direction (default 1)",
	"wd": "L2 weight decay (default 1e-4)", "adam_beta1": "Adam β1 (0.9)", "adam_beta2": "Adam β2 (0.999)",
	"adam_eps": "Adam ε (1e-8)", "warmup_epochs": "adam-warmup: linear warmup length in epochs (default epochs/4)",
	"val_fraction": "-val methods: fraction of the training set held out for validation (default 0.1)",
}

// SetKeys lists every --set key with its help.
func SetKeys() map[string]string {
	m := map[string]string{}
	for k, v := range directionKeys {
		m[k] = v
	}
	for _, k := range schedule.Keys() {
		m[k] = schedule.KeyHelp(k)
	}
	return m
}

// NewPlan resolves the options for a training set of n examples.
func NewPlan(o Options, n int) (*Plan, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	p := &Plan{Options: o, Direction: Direction{Kind: "qhm", Momentum: 0.9, Nu: 1, WeightDecay: 1e-4}}
	if o.Method == "adam-warmup" {
		p.Direction = Direction{Kind: "adam", WeightDecay: 1e-4, AdamBeta1: 0.9, AdamBeta2: 0.999, AdamEps: 1e-8}
	}
	p.WarmupEpochs = float64(o.Epochs) / 4
	if strings.HasSuffix(o.Method, "-val") {
		p.ValFraction = 0.1
	}
	var sched [][2]string
	for _, kv := range o.Sets {
		k, v := kv[0], kv[1]
		if _, ok := directionKeys[k]; !ok {
			sched = append(sched, kv)
			continue
		}
		var f float64
		if _, err := fmt.Sscan(v, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("--set %s=%s: not a finite number", k, v)
		}
		switch k {
		case "momentum":
			p.Direction.Momentum = f
		case "nu":
			p.Direction.Nu = f
		case "wd":
			p.Direction.WeightDecay = f
		case "adam_beta1":
			p.Direction.AdamBeta1 = f
		case "adam_beta2":
			p.Direction.AdamBeta2 = f
		case "adam_eps":
			p.Direction.AdamEps = f
		case "warmup_epochs":
			p.WarmupEpochs = f
		case "val_fraction":
			if p.ValFraction == 0 {
				return nil, fmt.Errorf("--set val_fraction applies to the -val methods only")
			}
			if !(f > 0 && f < 1) {
				return nil, fmt.Errorf("--set val_fraction=%s: must be in (0, 1)", v)
			}
			p.ValFraction = f
		}
	}
	d := p.Direction
	switch {
	case !(d.Momentum >= 0 && d.Momentum < 1):
		return nil, fmt.Errorf("--set momentum=%v: must be in [0, 1)", d.Momentum)
	case !(d.Nu >= 0 && d.Nu <= 1):
		return nil, fmt.Errorf("--set nu=%v: must be in [0, 1]", d.Nu)
	case !(d.WeightDecay >= 0):
		return nil, fmt.Errorf("--set wd=%v: must be ≥ 0", d.WeightDecay)
	case p.WarmupEpochs < 0:
		return nil, fmt.Errorf("--set warmup_epochs=%v: must be ≥ 0", p.WarmupEpochs)
	}
	p.NVal = int(math.Round(p.ValFraction * float64(n)))
	p.NTrain = n - p.NVal
	if o.Batch > p.NTrain {
		return nil, fmt.Errorf("--batch %d: must be ≤ the %d training examples", o.Batch, p.NTrain)
	}
	p.StepsPerEpoch = (p.NTrain + o.Batch - 1) / o.Batch
	cfg, err := schedule.Defaults(schedule.Preset(o.Preset), p.NTrain, o.Batch, o.LR0)
	if err != nil {
		return nil, err
	}
	for _, d := range o.Drops {
		cfg.Cut.DropSteps = append(cfg.Cut.DropSteps, d*p.StepsPerEpoch)
	}
	cfg.Warmup.Steps = int(math.Round(p.WarmupEpochs * float64(p.StepsPerEpoch)))
	for _, kv := range sched {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	p.Schedule = cfg
	p.Scheduler = map[string]string{"shb-hand": "cut", "adam-warmup": "warmup"}[o.Method]
	if p.Scheduler == "" {
		p.Scheduler = o.Method
	}
	if _, err := schedule.New(p.Scheduler, cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// Load reads a dataset from the --data folder, SALSA_DATA or the
// repository's copy (data.Resolve). With download, missing files are fetched
// from mirror (the dataset's default mirror when empty) into that folder, or
// into ./data/<name> when none exists, and verified by SHA-256.
func Load(ctx context.Context, dataDir, name string, download bool, mirror string, stderr io.Writer) (*data.Dataset, error) {
	dir, err := data.Resolve(dataDir, name)
	if err != nil && !download {
		return nil, err
	}
	if err != nil {
		dir = filepath.Join("data", name)
	}
	if download {
		fmt.Fprintf(stderr, "checking %s in %s, downloading what is missing (verified by SHA-256)\n", name, dir)
		if err := data.Download(ctx, nil, mirror, dir, name); err != nil {
			return nil, err
		}
	}
	switch name {
	case "mnist":
		return data.LoadMNIST(dir)
	case "fashion-mnist":
		return data.LoadFashionMNIST(dir)
	case "cifar10":
		return data.LoadCIFAR10(dir)
	}
	return nil, fmt.Errorf("--dataset %s: unknown", name)
}

func split(im *data.Images, y data.Labels, mean, std []float32, classes int) (*Split, error) {
	x, err := im.Float32(mean, std)
	if err != nil {
		return nil, err
	}
	s := &Split{X: x, Y: make([]int32, len(y)), Dim: im.Dim(), Labels: classes}
	for i, v := range y {
		s.Y[i] = int32(v)
	}
	return s, nil
}

// Splits returns the training, validation (nil unless the plan holds one
// out: the last NVal training examples) and test splits.
func Splits(ds *data.Dataset, p *Plan) (train, val, test *Split, err error) {
	all, err := split(ds.TrainX, ds.TrainY, ds.Mean, ds.Std, ds.Classes)
	if err != nil {
		return nil, nil, nil, err
	}
	if test, err = split(ds.TestX, ds.TestY, ds.Mean, ds.Std, ds.Classes); err != nil {
		return nil, nil, nil, err
	}
	train = all
	if p.NVal > 0 {
		n, d := p.NTrain, all.Dim
		train = &Split{X: all.X[:n*d], Y: all.Y[:n], Dim: d, Labels: all.Labels}
		val = &Split{X: all.X[n*d:], Y: all.Y[n:], Dim: d, Labels: all.Labels}
	}
	return train, val, test, nil
}

// Perm is the order of the training examples in epoch e (1-based): a fresh
// shuffle from the seed, the same whenever the run is resumed.
func Perm(seed uint64, epoch, n int) []int {
	return rand.New(rand.NewPCG(seed, uint64(epoch))).Perm(n)
}

// EpochRow is one line of epochs.csv.
type EpochRow struct {
	Epoch, Steps                     int
	LR, TrainLoss, TestLoss, TestAcc float64
	Switched                         bool
	Drops                            int
	Seconds                          float64
}

// EpochsHeader is the header of epochs.csv.
const EpochsHeader = "epoch,steps,lr,train_loss,test_loss,test_acc,switched,drops,seconds"

func (r EpochRow) format() string {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	f := trace.FormatFloat
	return fmt.Sprintf("%d,%d,%s,%s,%s,%s,%d,%d,%s", r.Epoch, r.Steps, f(r.LR), f(r.TrainLoss), f(r.TestLoss),
		f(r.TestAcc), b(r.Switched), r.Drops, f(r.Seconds))
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
	Rows      []trace.Row
	Events    []schedule.Event
	Epochs    []EpochRow
}

const checkpointVersion = 1

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
	Seconds           float64
	Stopped           bool // stopped by --max-steps before the last epoch
}

// Run trains according to p from scratch, or from the checkpoint in out when
// resume is true. progress, if not nil, is called after each step.
func Run(p *Plan, out string, resume bool, maxSteps int, train, val, test *Split, progress func(epoch, pos int, res schedule.Result, loss float64), log io.Writer) (*Result, error) {
	engineName, err := ChooseEngine(p)
	if err != nil {
		return nil, err
	}
	p.Options.Engine = engineName
	eng, err := Engines[engineName](p, train)
	if err != nil {
		return nil, err
	}
	sched, err := schedule.New(p.Scheduler, p.Schedule)
	if err != nil {
		return nil, err
	}
	ck := &Checkpoint{Version: checkpointVersion, Plan: *p, Epoch: 1}
	if resume {
		if ck, err = ReadCheckpoint(out); err != nil {
			return nil, err
		}
		if sched, err = schedule.Restore(ck.Scheduler); err != nil {
			return nil, fmt.Errorf("--resume %s: %w", out, err)
		}
		if err := eng.UnmarshalBinary(ck.Engine); err != nil {
			return nil, fmt.Errorf("--resume %s: %w", out, err)
		}
	} else {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		rj, _ := json.MarshalIndent(map[string]any{"method": p.Options.Method, "label": p.Options.Label,
			"schedule": p.Schedule, "plan": p, "versions": Versions(), "engine": engineName}, "", "  ")
		if err := writeAtomic(filepath.Join(out, "run.json"), append(rj, '\n')); err != nil {
			return nil, err
		}
	}
	save := func() error {
		ck.Saved = ck.Step
		var err error
		if ck.Scheduler, err = sched.MarshalBinary(); err != nil {
			return err
		}
		if ck.Engine, err = eng.MarshalBinary(); err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(ck); err != nil {
			return err
		}
		if err := writeOutputs(out, ck); err != nil {
			return err
		}
		return writeAtomic(filepath.Join(out, "checkpoint.gob"), buf.Bytes())
	}
	start := time.Now().Add(-time.Duration(ck.Seconds * float64(time.Second)))
	spe := p.StepsPerEpoch
	idx := make([]int, 0, p.Options.Batch)
	for ck.Epoch <= p.Options.Epochs {
		perm := Perm(p.Options.Seed, ck.Epoch, train.N())
		for ; ck.Pos < spe; ck.Pos++ {
			if maxSteps > 0 && ck.Step >= maxSteps {
				ck.Seconds = time.Since(start).Seconds()
				if err := save(); err != nil {
					return nil, err
				}
				return &Result{Epochs: ck.Epoch - 1, Steps: ck.Step, LR: sched.LR(), Seconds: ck.Seconds, Stopped: true}, nil
			}
			lo := ck.Pos * p.Options.Batch
			idx = append(idx[:0], perm[lo:min(lo+p.Options.Batch, len(perm))]...)
			k := ck.Step + 1
			st, err := eng.Step(sched, idx)
			if err != nil {
				sched.Abort()
				if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) {
					return nil, fmt.Errorf("step %d (epoch %d): the training loss is %v: stopping; the last good checkpoint (step %d) in %s is intact",
						k, ck.Epoch, st.Loss, lastGood(ck), out)
				}
				return nil, fmt.Errorf("step %d (epoch %d): %w; the last good checkpoint (step %d) in %s is intact", k, ck.Epoch, err, lastGood(ck), out)
			}
			ck.Step = k
			ck.LossSum += st.Loss
			ck.Rows = append(ck.Rows, trace.Row{Step: k, LR: st.LR, Loss: st.Loss, X1D: st.X1D, D2: st.D2, Eta: st.Eta, HasEta: st.Searched})
			ck.count(st.Events)
			if progress != nil {
				progress(ck.Epoch, ck.Pos+1, st.Result, st.Loss)
			}
		}
		// End of epoch: the validation check of a -val method, the test
		// evaluation, and a checkpoint.
		if v, ok := sched.(*schedule.WithValidation); ok && val != nil {
			vl, _, err := eng.Evaluate(val)
			if err != nil {
				return nil, err
			}
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
		}
		tl, ta, err := eng.Evaluate(test)
		if err != nil {
			return nil, err
		}
		ck.Seconds = time.Since(start).Seconds()
		r := EpochRow{Epoch: ck.Epoch, Steps: ck.Step, LR: sched.LR(), TrainLoss: ck.LossSum / float64(spe),
			TestLoss: tl, TestAcc: ta, Switched: ck.Switched, Drops: ck.Drops, Seconds: ck.Seconds}
		ck.Epochs = append(ck.Epochs, r)
		ck.Epoch, ck.Pos, ck.LossSum = ck.Epoch+1, 0, 0
		if err := save(); err != nil {
			return nil, err
		}
		if log != nil {
			fmt.Fprintf(log, "epoch %d/%d: lr=%.4g train_loss=%.4f test_loss=%.4f test_acc=%.4f drops=%d switched=%v %.1fs\n",
				r.Epoch, p.Options.Epochs, r.LR, r.TrainLoss, r.TestLoss, r.TestAcc, r.Drops, r.Switched, r.Seconds)
		}
	}
	if len(ck.Epochs) == 0 {
		return nil, fmt.Errorf("no epoch completed")
	}
	last := ck.Epochs[len(ck.Epochs)-1]
	return &Result{Epochs: last.Epoch, Steps: ck.Step, LR: sched.LR(), TestLoss: last.TestLoss, TestAcc: last.TestAcc, Seconds: ck.Seconds}, nil
}

// count records drops and switches for epochs.csv.
func (ck *Checkpoint) count(evs []schedule.Event) {
	ck.Events = append(ck.Events, evs...)
	for _, e := range evs {
		switch e.Kind {
		case schedule.KindDrop:
			ck.Drops++
		case schedule.KindSwitch:
			ck.Switched = true
		}
	}
}

func lastGood(ck *Checkpoint) int { return ck.Saved }

// writeOutputs rewrites epochs.csv, steps.csv.gz and events.csv from the
// checkpoint's rows, atomically, so that a resumed run's files are those of
// an uninterrupted one.
func writeOutputs(out string, ck *Checkpoint) error {
	var eb strings.Builder
	eb.WriteString(EpochsHeader + "\n")
	for _, r := range ck.Epochs {
		eb.WriteString(r.format() + "\n")
	}
	if err := writeAtomic(filepath.Join(out, "epochs.csv"), []byte(eb.String())); err != nil {
		return err
	}
	var sb bytes.Buffer
	zw := gzip.NewWriter(&sb)
	tw, err := trace.NewTraceWriter(zw)
	if err != nil {
		return err
	}
	for _, r := range ck.Rows {
		if err := tw.Write(r); err != nil {
			return err
		}
	}
	if err := errors.Join(tw.Flush(), zw.Close()); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(out, "steps.csv.gz"), sb.Bytes()); err != nil {
		return err
	}
	var evb bytes.Buffer
	if err := trace.WriteEvents(&evb, ck.Events); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(out, "events.csv"), evb.Bytes())
}

// ReadCheckpoint reads the checkpoint of the run in dir.
func ReadCheckpoint(dir string) (*Checkpoint, error) {
	b, err := os.ReadFile(filepath.Join(dir, "checkpoint.gob"))
	if err != nil {
		return nil, fmt.Errorf("--resume %s: %w", dir, err)
	}
	ck := new(Checkpoint)
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(ck); err != nil {
		return nil, fmt.Errorf("--resume %s: checkpoint.gob: %w", dir, err)
	}
	if ck.Version != checkpointVersion {
		return nil, fmt.Errorf("--resume %s: checkpoint version %d: this build reads %d", dir, ck.Version, checkpointVersion)
	}
	return ck, nil
}
