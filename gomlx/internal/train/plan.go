package train

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/salsaopt/salsa/data"
	"github.com/salsaopt/salsa/replay"
	"github.com/salsaopt/salsa/schedule"
)

// Methods lists the --method values.
var Methods = []string{"salsa", "salsa-budget", "salsa-probe", "sasa+", "sasa", "ssls", "slope", "shb-hand", "adam-warmup", "salsa-val", "sasa+-val",
	"schedule-free-sgd", "schedule-free-adamw", "prodigy", "dadapt-sgd", "dog", "cosine", "wsd", "plateau"} // the peers: see Peers

// ModelInfo describes a --model: what data it takes and its defaults.
type ModelInfo struct {
	Name     string
	Text     bool    // a language model (token streams), else a classifier of examples
	Conv     bool    // takes images H×W×C (and is augmented by default)
	Batch    int     // default --batch
	WD       float64 // default weight decay
	DecayAll bool    // default decay: every parameter (true) or weights only
	BPTT     int     // language models: default BPTT length
	Clip     float64 // language models: default gradient-clipping norm
	Help     string
}

// Models are the --model values, in the order the help lists them.
var Models = []ModelInfo{
	{Name: "logreg", Batch: 128, WD: 1e-4, DecayAll: true, Help: "softmax regression, weights starting at zero"},
	{Name: "mlp", Batch: 128, WD: 1e-4, DecayAll: true, Help: "784-512-512-10 multilayer perceptron, ReLU"},
	{Name: "cnn", Conv: true, Batch: 128, WD: 1e-4, Help: "conv 3×3 32, pool, conv 3×3 64, pool, dense 128, dense"},
	{Name: "resnet20", Conv: true, Batch: 128, WD: 5e-4, Help: "the CIFAR ResNet-20 of He et al. 2016, batch norm"},
	{Name: "resnet18", Conv: true, Batch: 128, WD: 5e-4, Help: "the paper's CIFAR ResNet-18, batch norm"},
	{Name: "lstm", Text: true, Batch: 32, BPTT: 64, Clip: 0.25, Help: "character LSTM: embedding 256, 2×256, dropout 0.2, tied"},
	{Name: "lstm-paper", Text: true, Batch: 20, BPTT: 35, Clip: 0.25, Help: "the paper's WikiText-2 LSTM: 2×1500, dropout 0.65, tied"},
}

// Model returns the description of a --model.
func Model(name string) (ModelInfo, bool) {
	for _, m := range Models {
		if m.Name == name {
			return m, true
		}
	}
	return ModelInfo{}, false
}

func modelNames() []string {
	var s []string
	for _, m := range Models {
		s = append(s, m.Name)
	}
	return s
}

// Datasets are the --dataset values; text datasets go with language models.
var Datasets = []string{"mnist", "fashion-mnist", "cifar10", "cifar10-synthetic", "tinyshakespeare", "wikitext2"}

// IsText reports whether a dataset is text for language models.
func IsText(dataset string) bool { return dataset == "tinyshakespeare" || dataset == "wikitext2" }

// Options is everything a run depends on. It is saved in run.json and in the
// checkpoint, so that --resume continues the same run.
type Options struct {
	Dataset string  `json:"dataset"`
	Model   string  `json:"model"`
	Method  string  `json:"method"`
	Preset  string  `json:"preset"`
	LR0     float64 `json:"lr0"`
	Epochs  int     `json:"epochs"`
	Batch   int     `json:"batch"` // 0: the model's default
	Seed    uint64  `json:"seed"`
	Drops   []int   `json:"drops,omitempty"` // shb-hand: cut after these epochs
	Engine  string  `json:"engine"`          // auto, gomlx or native
	Label   string  `json:"label,omitempty"`
	// Limit > 0 trains on the first Limit training examples (or tokens)
	// only, for a quick try.
	Limit int `json:"limit,omitempty"`
	// TestLimit > 0 evaluates on the first TestLimit test examples (or
	// tokens; a text's validation split is cut to as many tokens too) only,
	// to make each epoch's evaluation cheaper.
	TestLimit int `json:"test_limit,omitempty"`
	// Sets are the --set key=value pairs, in order: the keys of setKeys
	// and schedule.Keys().
	Sets [][2]string `json:"sets,omitempty"`
	// HoldOut > 0 evaluates a validation split at the end of each epoch for
	// any method (val_loss and val_acc in epochs.csv): for images the last
	// HoldOut of the training examples, held out of training; for a text
	// its validation split. salsa compare sets it for every run of a
	// comparison that tunes on validation, so they all train on the same
	// examples in the same order.
	HoldOut float64 `json:"hold_out,omitempty"`
}

// Direction is the resolved direction configuration.
type Direction struct {
	Kind        string  `json:"kind"` // "qhm" or "adam"
	Momentum    float64 `json:"momentum"`
	Nu          float64 `json:"nu"`
	WeightDecay float64 `json:"weight_decay"`
	DecayAll    bool    `json:"decay_all"` // every parameter decays, else rank ≥ 2 only
	Clip        float64 `json:"clip,omitempty"`
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
	NTrain        int             `json:"n_train"` // examples, or tokens of a text
	NVal          int             `json:"n_val"`
	NTest         int             `json:"n_test"` // set by Splits
	StepsPerEpoch int             `json:"steps_per_epoch"`
	WarmupEpochs  float64         `json:"warmup_epochs,omitempty"`
	ValFraction   float64         `json:"val_fraction,omitempty"`
	BPTT          int             `json:"bptt,omitempty"`    // language models
	Augment       bool            `json:"augment,omitempty"` // random crop (pad 2) and flip
	// Data are the files the data set was read from (set by the caller
	// that loaded it; written to run.json's data, not to the plan).
	Data []data.FileDigest `json:"-"`
}

// Validate checks the options and names the flag, the value and what is
// allowed.
func (o *Options) Validate() error {
	m, ok := Model(o.Model)
	switch {
	case !slices.Contains(Datasets, o.Dataset):
		return fmt.Errorf("--dataset %s: must be one of %s", o.Dataset, strings.Join(Datasets, ", "))
	case !ok:
		return fmt.Errorf("--model %s: must be one of %s", o.Model, strings.Join(modelNames(), ", "))
	case m.Text != IsText(o.Dataset):
		if m.Text {
			return fmt.Errorf("--model %s is a language model: --dataset must be tinyshakespeare or wikitext2 (got %s)", o.Model, o.Dataset)
		}
		return fmt.Errorf("--dataset %s is text: --model must be lstm or lstm-paper (got %s)", o.Dataset, o.Model)
	case !slices.Contains(Methods, o.Method):
		return fmt.Errorf("--method %s: must be one of %s", o.Method, strings.Join(Methods, ", "))
	case o.Preset != "paper" && o.Preset != "statopt":
		return fmt.Errorf("--preset %s: must be paper or statopt", o.Preset)
	case !(o.LR0 > 0) || math.IsInf(o.LR0, 0):
		return fmt.Errorf("--lr0 %v: must be finite and > 0", o.LR0)
	case float32(o.LR0) == 0 || math.IsInf(float64(float32(o.LR0)), 0):
		return fmt.Errorf("--lr0 %v: must be within float32's range, where the engines keep the rate (%v to %v)", o.LR0, math.SmallestNonzeroFloat32, math.MaxFloat32)
	case o.Epochs < 1:
		return fmt.Errorf("--epochs %d: must be ≥ 1", o.Epochs)
	case o.Limit < 0:
		return fmt.Errorf("--limit %d: must be ≥ 0 (0: the whole training set)", o.Limit)
	case o.TestLimit < 0:
		return fmt.Errorf("--test-limit %d: must be ≥ 0 (0: the whole test set)", o.TestLimit)
	case !(o.HoldOut >= 0 && o.HoldOut < 1):
		return fmt.Errorf("hold-out fraction %v: must be in [0, 1)", o.HoldOut)
	case o.Batch < 0:
		return fmt.Errorf("--batch %d: must be ≥ 1 (or 0 for the model's default, %d for %s)", o.Batch, m.Batch, o.Model)
	}
	for i, d := range o.Drops {
		if d < 1 {
			return fmt.Errorf("--drops %v: epoch %d: a cut comes after an epoch ≥ 1", o.Drops, d)
		}
		if i > 0 && d <= o.Drops[i-1] {
			return fmt.Errorf("--drops %v: the epochs must be strictly increasing (%d after %d)", o.Drops, d, o.Drops[i-1])
		}
	}
	if len(o.Drops) > 0 && o.Method != "shb-hand" {
		return fmt.Errorf("--drops applies to --method shb-hand only (got %s)", o.Method)
	}
	return nil
}

// Warnings lists what the options allow but will not do: cuts after the
// last epoch (as PyTorch's MultiStepLR allows milestones past the end).
func (o *Options) Warnings() []string {
	var w []string
	for _, d := range o.Drops {
		if d >= o.Epochs {
			w = append(w, fmt.Sprintf("--drops: the cut after epoch %d never happens in a run of --epochs %d", d, o.Epochs))
		}
	}
	return w
}

// Warnings lists what the plan allows but will not do within the run's
// steps: a budget (total_steps) shorter than the run, whose rate is then
// kept for the steps past it; a forced switch after the last step; an
// adam-warmup warmup longer than the run.
func (p *Plan) Warnings() []string {
	var w []string
	steps := p.Options.Epochs * p.StepsPerEpoch
	c := p.Schedule
	budget := 0
	switch p.Scheduler {
	case "cosine":
		budget = c.Cosine.Steps
	case "wsd":
		budget = c.WSD.Steps
	case "salsa-budget", "salsa-probe":
		budget = c.Tail.Steps
	}
	if budget > 0 && budget < steps {
		w = append(w, fmt.Sprintf("--set total_steps=%d: the run makes %d steps; the steps past the budget keep its last rate", budget, steps))
	}
	if c.ForceSwitchAt > steps && schedule.KeyApplies("force_switch_at", p.Scheduler) {
		w = append(w, fmt.Sprintf("--set force_switch_at=%d: the run makes %d steps, so it never forces the switch", c.ForceSwitchAt, steps))
	}
	if p.Scheduler == "warmup" && c.Warmup.Steps > steps {
		w = append(w, fmt.Sprintf("the warmup of %d steps outlasts the run's %d steps: the rate never reaches its peak", c.Warmup.Steps, steps))
	}
	return w
}

// FillDefaults sets what a new run takes from the other options when not
// given: shb-hand's cuts (DefaultDrops of the epochs).
func (o *Options) FillDefaults() {
	if o.Method == "shb-hand" && len(o.Drops) == 0 {
		o.Drops = DefaultDrops(o.Epochs)
	}
}

// DefaultDrops are shb-hand's cuts when --drops is not given: after one and
// two thirds of the epochs (10 and 20 of 30), those that are ≥ 1.
func DefaultDrops(epochs int) []int {
	var d []int
	for _, e := range []int{epochs / 3, 2 * epochs / 3} {
		if e >= 1 && e < epochs && (len(d) == 0 || e > d[len(d)-1]) {
			d = append(d, e)
		}
	}
	return d
}

// setKeys are the --set keys of the direction and the data, with their help.
var setKeys = map[string]string{
	"momentum":      "β of the QHM direction (default 0.9)",
	"nu":            "ν of the QHM direction (default 1)",
	"wd":            "L2 weight decay (default 1e-4; 5e-4 for resnet20 and resnet18; 0 for the language models)",
	"decay":         "which parameters decay: all, or weights (rank ≥ 2: no decay on biases and batch norm; default all for logreg and mlp, as the paper, weights for the others)",
	"clip":          "gradient clipping: the largest global norm of ∇f (default 0.25 for language models, 0 = off otherwise)",
	"bptt":          "language models: truncated back-propagation length (default 64 for lstm, 35 for lstm-paper)",
	"augment":       "convolutional models: random crop (pad 2) and horizontal flip, 1 or 0 (default 1)",
	"adam_beta1":    "Adam β1 (0.9)",
	"adam_beta2":    "Adam β2 (0.999)",
	"adam_eps":      "Adam ε (1e-8)",
	"warmup_epochs": "adam-warmup: linear warmup length in epochs (default epochs/4); schedule-free-*, cosine, wsd: (default 5% of epochs)",
	"val_fraction":  "-val methods, plateau, salsa-probe, probe_val=1 and average=1 on images: fraction of the training set held out for validation (default 0.1)",
	"probe_welch_wd": "salsa-probe, and salsa-budget with probe=1: 1 turns probe_welch on where the run's wd is > 0 and leaves it off where wd = 0 " +
		"(docs/parity/welch.md: Welch's window test helped the lstms with weight decay and hurt those without it, and a cnn with it); 0 or 1 (default 0)",
}

// SetKeys lists every --set key with its help.
func SetKeys() map[string]string {
	m := map[string]string{}
	for k, v := range setKeys {
		m[k] = v
	}
	for _, k := range schedule.Keys() {
		switch k {
		case "lr0", "drop_steps": // salsa train's flags --lr0 and --drops set them
			continue
		}
		m[k] = schedule.KeyHelp(k)
	}
	return m
}

// SortedSetKeys lists the --set keys in order.
func SortedSetKeys() []string {
	keys := SetKeys()
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// NewPlan resolves the options for a training set of n examples (or, for a
// language model, n tokens).
func NewPlan(o Options, n int) (*Plan, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	m, _ := Model(o.Model)
	if o.Batch == 0 {
		o.Batch = m.Batch
	}
	if o.Limit > n {
		return nil, beyondSplit("--limit", o.Limit, "training", n, "(examples, or tokens for a text)")
	}
	if o.Limit > 0 {
		n = o.Limit
	}
	p := &Plan{Options: o, Direction: Direction{Kind: "qhm", Momentum: 0.9, Nu: 1, WeightDecay: m.WD, DecayAll: m.DecayAll, Clip: m.Clip},
		BPTT: m.BPTT, Augment: m.Conv}
	if o.Method == "adam-warmup" {
		p.Direction = Direction{Kind: "adam", WeightDecay: m.WD, DecayAll: m.DecayAll, Clip: m.Clip, AdamBeta1: 0.9, AdamBeta2: 0.999, AdamEps: 1e-8}
	}
	p.WarmupEpochs = float64(o.Epochs) / 4
	if (strings.HasSuffix(o.Method, "-val") || probeVal(o.Sets) || averagesIterates(o.Method, o.Sets)) && !m.Text {
		p.ValFraction = 0.1
	}
	applyPeer(p, m.Text)
	if o.HoldOut > 0 && !m.Text {
		p.ValFraction = o.HoldOut
	}
	schedName, err := replay.Scheduler(o.Method)
	if err != nil {
		return nil, err
	}
	for i, kv := range o.Sets {
		if j := slices.IndexFunc(o.Sets[:i], func(e [2]string) bool { return e[0] == kv[0] }); j >= 0 {
			return nil, fmt.Errorf("--set %s given twice (%s, then %s): give each key once", kv[0], o.Sets[j][1], kv[1])
		}
	}
	var sched [][2]string
	welchWD := false // probe_welch_wd=1: probe_welch where wd > 0, set once wd is known
	for _, kv := range o.Sets {
		k, v := kv[0], kv[1]
		if err := SetApplies(k, o.Method, o.Sets); err != nil {
			return nil, err
		}
		if k == "warmup_steps" && slices.ContainsFunc(o.Sets, func(kv [2]string) bool { return kv[0] == "warmup_epochs" }) {
			return nil, fmt.Errorf("--set warmup_steps and warmup_epochs both set the warmup's length: give one")
		}
		if _, ok := setKeys[k]; !ok {
			sched = append(sched, kv)
			continue
		}
		if k == "decay" {
			if v != "all" && v != "weights" {
				return nil, fmt.Errorf("--set decay=%s: must be all or weights", v)
			}
			p.Direction.DecayAll = v == "all"
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64) // the whole value: 0.5abc is not 0.5
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("--set %s=%s: not a finite number", k, v)
		}
		switch k {
		case "momentum":
			p.Direction.Momentum = f
		case "nu":
			p.Direction.Nu = f
		case "wd":
			p.Direction.WeightDecay = f
		case "clip":
			if !(f >= 0) {
				return nil, fmt.Errorf("--set clip=%s: must be ≥ 0 (0 = off)", v)
			}
			p.Direction.Clip = f
		case "bptt":
			if !m.Text {
				return nil, fmt.Errorf("--set bptt applies to the language models only (got --model %s)", o.Model)
			}
			if f < 1 || f != math.Trunc(f) {
				return nil, fmt.Errorf("--set bptt=%s: must be an integer ≥ 1", v)
			}
			p.BPTT = int(f)
		case "augment":
			if !m.Conv {
				return nil, fmt.Errorf("--set augment applies to the convolutional models only (got --model %s)", o.Model)
			}
			if f != 0 && f != 1 {
				return nil, fmt.Errorf("--set augment=%s: must be 0 or 1", v)
			}
			p.Augment = f == 1
		case "adam_beta1":
			p.Direction.AdamBeta1 = f
		case "adam_beta2":
			p.Direction.AdamBeta2 = f
		case "adam_eps":
			p.Direction.AdamEps = f
		case "warmup_epochs":
			p.WarmupEpochs = f
		case "probe_welch_wd":
			if f != 0 && f != 1 {
				return nil, fmt.Errorf("--set probe_welch_wd=%s: must be 0 or 1", v)
			}
			if slices.ContainsFunc(o.Sets, func(kv [2]string) bool { return kv[0] == "probe_welch" }) {
				return nil, fmt.Errorf("--set probe_welch_wd and probe_welch both set Welch's window test: give one")
			}
			welchWD = f == 1
		case "val_fraction":
			if p.ValFraction == 0 {
				return nil, fmt.Errorf("--set val_fraction applies to the -val methods, salsa-probe, probe_val=1 and average=1 on images only (language models validate on the text's validation split)")
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
	// The number of examples the schedule's N_min is computed from, and the
	// steps of an epoch.
	nSched := 0
	if m.Text {
		p.NTrain = n
		streams := n / o.Batch
		if streams < 2 {
			return nil, fmt.Errorf("--batch %d: the %d training tokens make streams of %d tokens: need ≥ 2", o.Batch, n, streams)
		}
		// A chunk is at most a stream less its last token: a longer BPTT
		// length would be cut to that without a word.
		if p.BPTT > streams-1 {
			return nil, fmt.Errorf("--set bptt=%d: must be ≤ %d, the length of a training stream less one (%d training tokens in --batch %d streams of %d)", p.BPTT, streams-1, n, o.Batch, streams)
		}
		p.StepsPerEpoch = data.LMChunks(streams, p.BPTT)
		// A step sees batch·bptt tokens: N_min = ⌈n/b⌉ with b the tokens of a step.
		nSched = p.StepsPerEpoch * o.Batch
	} else {
		p.NVal = int(math.Round(p.ValFraction * float64(n)))
		p.NTrain = n - p.NVal
		if o.Batch > p.NTrain {
			return nil, fmt.Errorf("--batch %d: must be ≤ the %d training examples", o.Batch, p.NTrain)
		}
		p.StepsPerEpoch = (p.NTrain + o.Batch - 1) / o.Batch
		nSched = p.NTrain
	}
	if o.Epochs > math.MaxInt32/p.StepsPerEpoch {
		return nil, fmt.Errorf("--epochs %d: must be ≤ %d: a run of %d steps per epoch must make at most %d steps",
			o.Epochs, math.MaxInt32/p.StepsPerEpoch, p.StepsPerEpoch, math.MaxInt32)
	}
	cfg, err := schedule.Defaults(schedule.Preset(o.Preset), nSched, o.Batch, o.LR0)
	if err != nil {
		return nil, err
	}
	for _, d := range o.Drops {
		cfg.Cut.DropSteps = append(cfg.Cut.DropSteps, d*p.StepsPerEpoch)
	}
	cfg.Warmup.Steps = int(math.Round(p.WarmupEpochs * float64(p.StepsPerEpoch)))
	setBudget(&cfg, schedName, p)
	for _, kv := range sched {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	cfg = cfg.ForMethod(schedName) // what schedule.New runs, so that run.json says so
	if welchWD {
		// refused as ProbeWelch would be, whatever the wd
		on := cfg.Tail
		on.ProbeWelch = true
		if err := on.Validate(); err != nil {
			return nil, fmt.Errorf("--set probe_welch_wd=1 (Welch's window test where wd > 0): %w", err)
		}
		cfg.Tail.ProbeWelch = p.Direction.WeightDecay > 0 // run.json's schedule records the outcome, which replay reads
	}
	p.Schedule, p.Scheduler = cfg, schedName
	if _, err := schedule.Build(p.Scheduler, cfg); err != nil {
		return nil, userError(err, o)
	}
	if err := checkPeer(p); err != nil {
		return nil, err
	}
	return p, nil
}

// withKey returns c with the values sets gives key applied in order, for a
// decision NewPlan takes before it sets the schedule's keys; a bad value is
// skipped here and reported where the keys are set.
func withKey(c schedule.Config, sets [][2]string, key string) schedule.Config {
	for _, kv := range sets {
		if kv[0] == key {
			_ = c.Set(kv[0], kv[1])
		}
	}
	return c
}

// probeVal reports whether sets turn on the probe's validation check
// (probe_val=1), which needs a validation split.
func probeVal(sets [][2]string) bool {
	return withKey(schedule.Config{}, sets, "probe_val").Tail.ProbeVal
}

// averagesIterates reports whether method with sets keeps the average of
// the decay's iterates and picks it on a validation split
// (schedule.TailConfig.Average: salsa-probe, or salsa-budget with
// average=1).
func averagesIterates(method string, sets [][2]string) bool {
	return withKey(schedule.Config{}, sets, "average").ForMethod(method).Tail.Average
}

// KeyApplies returns nil if --set k does something for method, else the
// error salsa train gives for it: an unknown key, a key a flag sets, or one
// the method never reads (naming the methods it applies to). The keys of
// the model and the data apply to every method here; NewPlan checks them
// against the model.
func KeyApplies(k, method string) error {
	if _, ok := setKeys[k]; !ok && !slices.Contains(schedule.Keys(), k) {
		return fmt.Errorf("--set %s: unknown key; the keys are %s", k, strings.Join(SortedSetKeys(), ", "))
	}
	var applies []string // train's methods the key applies to
	switch k {
	case "lr0":
		return fmt.Errorf("--set lr0: use --lr0")
	case "drop_steps":
		return fmt.Errorf("--set drop_steps: use --drops (epochs after which shb-hand cuts)")
	case "momentum", "nu", "adam_beta1", "adam_beta2", "adam_eps", "warmup_epochs":
		applies = keyMethods(k)
	case "probe_welch_wd":
		applies = []string{"salsa-budget", "salsa-probe"}
	default:
		if _, ok := setKeys[k]; ok {
			return nil // the model and data keys check themselves
		}
		for _, m := range Methods {
			s, err := replay.Scheduler(m)
			// τ is the factor of a drop, and salsa train's warmup schedule
			// (adam-warmup) never drops: --drops is shb-hand's
			if err == nil && schedule.KeyApplies(k, s) && !(k == "tau" && s == "warmup") {
				applies = append(applies, m)
			}
		}
	}
	if slices.Contains(applies, method) {
		return nil
	}
	if len(applies) == 0 {
		return fmt.Errorf("--set %s does nothing for any --method of salsa train", k)
	}
	if method == "salsa-probe" && schedule.IgnoredFromSwitch(k) {
		return fmt.Errorf("--set %s does nothing for --method salsa-probe: its decay begins at the switch, so SASA+ never drops", k)
	}
	if method == "salsa-probe" && slices.Contains(applies, "salsa-budget") {
		on, refused := schedule.ProbeKeys()
		if err, ok := refused[k]; ok {
			return fmt.Errorf("--set %s does nothing for --method salsa-probe, whose switches (%s on) refuse it (%v); "+
				"to choose them one by one, use --method salsa-budget", k, strings.Join(on, ", "), err)
		}
		return fmt.Errorf("--set %s does nothing for --method salsa-probe, which has %s on; "+
			"to choose them one by one, use --method salsa-budget", k, strings.Join(on, ", "))
	}
	return fmt.Errorf("--set %s does nothing for --method %s; it applies to %s", k, method, strings.Join(applies, ", "))
}

// SetApplies is [KeyApplies] for --set k among all of sets, the --set
// pairs of one run: it also refuses the keys that shape only SASA+'s drops
// for salsa-budget when sets leave its decay beginning at the switch
// (decay_from_switch=1, the default), where SASA+ never drops.
func SetApplies(k, method string, sets [][2]string) error {
	if err := KeyApplies(k, method); err != nil {
		return err
	}
	if method == "salsa-budget" && schedule.IgnoredFromSwitch(k) && fromSwitch(sets) {
		return fmt.Errorf("--set %s does nothing for --method salsa-budget with decay_from_switch=1 (the default): "+
			"its decay begins at the switch, so SASA+ never drops; give --set decay_from_switch=0 to keep SASA+ until the last 20%%", k)
	}
	return nil
}

// fromSwitch reports whether sets leave salsa-budget's decay beginning at
// the switch: true unless the last decay_from_switch among them is 0.
func fromSwitch(sets [][2]string) bool {
	return withKey(schedule.Config{Tail: schedule.TailConfig{FromSwitch: true}}, sets, "decay_from_switch").Tail.FromSwitch
}

// userError rewrites a *schedule.FieldError, which names the Go field
// ("SASAPlusConfig.NMin"), with the --set key or flag that set it.
func userError(err error, o Options) error {
	var fe *schedule.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	sched, _ := replay.Scheduler(o.Method)
	keys := schedule.KeysFor(sched, fe.Field)
	key, typed := "", ""
	for _, kv := range o.Sets { // the key and value the user typed (each key is given once)
		if slices.Contains(keys, kv[0]) {
			key, typed = kv[0], kv[1]
		}
	}
	if _, isBool := fe.Value.(bool); isBool && typed != "" {
		return fmt.Errorf("--set %s=%s: %s", key, typed, fe.Want) // as typed, not Go's true or false
	}
	if key == "" && slices.Contains(keys, "warmup_steps") {
		// warmup_epochs sets the warmup of the budgeted methods in steps
		for _, kv := range o.Sets {
			if kv[0] == "warmup_epochs" {
				return fmt.Errorf("--set warmup_epochs=%s (%v steps): %s", kv[1], fe.Value, fe.Want)
			}
		}
	}
	switch {
	case key != "":
	case slices.Contains(keys, "lr0"):
		return fmt.Errorf("--lr0 %v: %s", fe.Value, fe.Want)
	case strings.HasPrefix(fe.Field, "CutConfig.DropSteps"):
		return fmt.Errorf("--drops %v: a cut must come after a step ≥ 1", o.Drops)
	case strings.HasPrefix(fe.Field, "WarmupConfig.Steps"):
		key = "warmup_epochs"
	case len(keys) > 0:
		key = keys[0]
	default:
		return err
	}
	return fmt.Errorf("--set %s=%v: %s", key, fe.Value, fe.Want)
}
