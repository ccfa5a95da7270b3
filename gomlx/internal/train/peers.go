package train

import (
	"fmt"
	"slices"
	"strings"

	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/schedule"
)

// MethodInfo describes a peer --method: the learning-rate-free and
// schedule-free directions of package direction, and the budgeted and
// plateau schedules of package schedule on the paper's QHM direction. Each
// runs untuned, at its authors' recommended defaults.
type MethodInfo struct {
	Name      string
	Direction string // Direction.Kind
	Scheduler string // the schedule.New name; replay.Scheduler(Name) agrees
	// LR0 is the authors' rate, the scheduler's α (the reference's "lr"),
	// that salsa train uses when --lr0 is not given; 0: the method needs a
	// tuned --lr0, as shb-hand does.
	LR0 float64
	// Warmup is the default linear warmup as a share of the budget, --epochs
	// × the steps of an epoch (--set warmup_epochs or warmup_steps
	// override it).
	Warmup float64
	// Val: the scheduler steps on the validation loss at each epoch's end.
	Val  bool
	Help string
}

// Peers are the peer methods, in the order the help lists them. The model's
// L2 weight decay (--set wd) is part of the objective for every method, as
// for the paper's: it is added to the gradient, and the directions' own
// weight decay is off (their authors' default).
var Peers = []MethodInfo{
	{Name: "schedule-free-sgd", Direction: "schedule-free-sgd", Scheduler: "warmup", LR0: 1, Warmup: 0.05,
		Help: "Schedule-Free SGD (Defazio et al. 2024) at the reference's defaults: lr 1, β 0.9, r 0, weight_lr_power 2, " +
			"with the recommended linear warmup, 5% of the steps; evaluated at the average x, gradients taken at y"},
	{Name: "schedule-free-adamw", Direction: "schedule-free-adamw", Scheduler: "warmup", LR0: 0.0025, Warmup: 0.05,
		Help: "Schedule-Free AdamW, reference defaults: lr 0.0025, β1 0.9, β2 0.999, ε 1e-8, r 0, weight_lr_power 2, " +
			"warmup 5% of the steps; evaluated at x"},
	{Name: "prodigy", Direction: "prodigy", Scheduler: "constant", LR0: 1,
		Help: "Prodigy (Mishchenko & Defazio 2024) at prodigyopt's defaults: constant lr 1, β1 0.9, β2 0.999, β3 √β2, " +
			"ε 1e-8, d0 1e-6, no bias correction, no safeguard warmup"},
	{Name: "dadapt-sgd", Direction: "dadapt-sgd", Scheduler: "constant", LR0: 1,
		Help: "D-Adaptation SGD (Defazio & Mishchenko 2023) at dadaptation's defaults: constant lr 1, momentum 0, d0 1e-6"},
	{Name: "dog", Direction: "dog", Scheduler: "constant", LR0: 1,
		Help: "DoG (Ivgi et al. 2023) at the reference's defaults: constant lr 1, reps_rel 1e-6, ε 1e-8; evaluated at " +
			"the polynomial-decay average (γ 8) its authors pair it with"},
	{Name: "cosine", Direction: "qhm", Scheduler: "cosine", Warmup: 0.05,
		Help: "the paper's QHM (β 0.9, ν 1) under cosine decay from --lr0 to 0 over the budget, --epochs × the steps " +
			"of an epoch, after a linear warmup over 5% of it; needs a tuned --lr0 (the peak), like shb-hand"},
	{Name: "wsd", Direction: "qhm", Scheduler: "wsd", Warmup: 0.05,
		Help: "QHM under warmup-stable-decay: linear warmup over 5% of the budget (--epochs × steps of an epoch), " +
			"--lr0, then a linear decay to 0 over its last 20%; needs a tuned --lr0"},
	{Name: "plateau", Direction: "qhm", Scheduler: "plateau", Val: true,
		Help: "QHM at --lr0 under ReduceLROnPlateau on the validation loss at each epoch's end, PyTorch's defaults " +
			"(factor 0.1, patience 10, threshold 1e-4 rel); images hold out val_fraction (10%) of the training set, " +
			"texts use their validation split; needs a tuned --lr0"},
}

// Peer returns the description of a peer method.
func Peer(method string) (MethodInfo, bool) {
	for _, m := range Peers {
		if m.Name == method {
			return m, true
		}
	}
	return MethodInfo{}, false
}

// AdamLR0 is adam-warmup's rate when --lr0 is not given: Adam's own default
// (Kingma & Ba 2015, and PyTorch's torch.optim.Adam).
const AdamLR0 = 1e-3

// MethodLR0 returns the rate a method runs at when --lr0 is not given: its
// authors' for the learning-rate-free and schedule-free methods and Adam's
// 1e-3 for adam-warmup (ok true), else nothing (the caller's --lr0 default).
func MethodLR0(method string) (lr float64, ok bool) {
	if method == "adam-warmup" {
		return AdamLR0, true
	}
	m, ok := Peer(method)
	return m.LR0, ok && m.LR0 > 0
}

// MethodsHelp describes the peer methods, one a line, for the help.
func MethodsHelp() string {
	var b strings.Builder
	for _, m := range Peers {
		fmt.Fprintf(&b, "  %-20s %s\n", m.Name, m.Help)
	}
	return b.String()
}

// lrAware reports whether a direction kind is one of package direction's
// LRAware methods: the native engine runs them on its flat vector, the GoMLX
// engine on the host between its gradient graph and the next step
// (salsagomlx.Host).
func lrAware(kind string) bool {
	return kind != "qhm" && kind != "adam"
}

// LogsStepSize reports whether a run of p writes steps.csv.gz with the
// step_size column (trace.StepSizeHeader): its direction's step is partly
// its own (direction.LRAware: the learning-rate-free and schedule-free
// peers).
func (p *Plan) LogsStepSize() bool { return lrAware(p.Direction.Kind) }

// applyPeer sets the direction, the warmup and the validation split of a
// peer method on a plan NewPlan has started, before the --set keys.
func applyPeer(p *Plan, text bool) {
	m, ok := Peer(p.Options.Method)
	if !ok {
		return
	}
	d := &p.Direction
	d.Kind = m.Direction
	switch m.Direction {
	case "schedule-free-sgd":
		d.Momentum, d.Nu = direction.DefaultScheduleFreeSGD().Beta1, 0
	case "schedule-free-adamw", "prodigy":
		d.Momentum, d.Nu = 0, 0
		d.AdamBeta1, d.AdamBeta2, d.AdamEps = 0.9, 0.999, 1e-8
	case "dadapt-sgd":
		d.Momentum, d.Nu = direction.DefaultDAdaptSGD().Momentum, 0
	case "dog":
		d.Momentum, d.Nu = 0, 0
	}
	p.WarmupEpochs = m.Warmup * float64(p.Options.Epochs)
	if m.Val && !text {
		p.ValFraction = 0.1
	}
}

// keyMethods lists the train methods a direction key (momentum, nu,
// adam_beta1, adam_beta2, adam_eps) or warmup_epochs applies to.
func keyMethods(k string) []string {
	var kinds []string
	switch k {
	case "momentum":
		kinds = []string{"qhm", "schedule-free-sgd", "dadapt-sgd"}
	case "nu":
		kinds = []string{"qhm"}
	case "adam_beta1", "adam_beta2", "adam_eps":
		kinds = []string{"adam", "schedule-free-adamw", "prodigy"}
	case "warmup_epochs":
		return []string{"adam-warmup", "schedule-free-sgd", "schedule-free-adamw", "cosine", "wsd"}
	}
	var ms []string
	for _, m := range Methods {
		kind := "qhm"
		if m == "adam-warmup" {
			kind = "adam"
		}
		if pm, ok := Peer(m); ok {
			kind = pm.Direction
		}
		if slices.Contains(kinds, kind) {
			ms = append(ms, m)
		}
	}
	return ms
}

// setBudget gives the schedules that need one (schedule.NeedsBudget: cosine,
// wsd, salsa-budget, salsa-probe) their budget, --epochs × the steps of an
// epoch, and their warmup (cfg.Warmup.Steps, from warmup_epochs); --set
// total_steps and warmup_steps, applied after, override them.
func setBudget(cfg *schedule.Config, sched string, p *Plan) {
	if schedule.NeedsBudget(sched) {
		cfg.SetBudget(p.Options.Epochs*p.StepsPerEpoch, cfg.Warmup.Steps)
	}
}

// checkPeer checks a peer direction's settings. Both engines run every
// peer: the native engine (--model logreg) on its flat vector, the GoMLX
// engine (every model) as a salsagomlx.Host direction.
func checkPeer(p *Plan) error {
	d, o := p.Direction, p.Options
	var err error
	switch {
	case d.Kind == "adam": // adam-warmup: checked here too, before the data load
		err = direction.AdamConfig{Beta1: d.AdamBeta1, Beta2: d.AdamBeta2, Eps: d.AdamEps}.Validate()
	case lrAware(d.Kind):
		_, err = newPeerDirection(d, 1)
	}
	if err != nil {
		// Name the --set key, not the Go field.
		beta1 := "adam_beta1"
		if d.Kind == "schedule-free-sgd" {
			beta1 = "momentum"
		}
		msg := strings.NewReplacer("direction: ", "", "ScheduleFreeConfig.Beta1", "--set "+beta1, "ProdigyConfig.Beta1", "--set adam_beta1",
			"ScheduleFreeConfig.Beta2", "--set adam_beta2", "ProdigyConfig.Beta2", "--set adam_beta2",
			"ScheduleFreeConfig.Eps", "--set adam_eps", "ProdigyConfig.Eps", "--set adam_eps",
			"AdamConfig.Beta1", "--set adam_beta1", "AdamConfig.Beta2", "--set adam_beta2", "AdamConfig.Eps", "--set adam_eps",
			"DAdaptSGDConfig.Momentum", "--set momentum").Replace(err.Error())
		return fmt.Errorf("--method %s: %s", o.Method, msg)
	}
	return nil
}

// newPeerDirection builds the LRAware direction of a peer kind on n float32
// parameters, without weight decay of its own (the engine's gradient holds
// the L2 term).
func newPeerDirection(d Direction, n int) (direction.LRAware[float32], error) {
	switch d.Kind {
	case "schedule-free-sgd":
		c := direction.DefaultScheduleFreeSGD()
		c.Beta1 = d.Momentum
		return direction.NewScheduleFree[float32](c, n)
	case "schedule-free-adamw":
		c := direction.DefaultScheduleFreeAdamW()
		c.Beta1, c.Beta2, c.Eps = d.AdamBeta1, d.AdamBeta2, d.AdamEps
		return direction.NewScheduleFree[float32](c, n)
	case "prodigy":
		c := direction.DefaultProdigy()
		c.Beta1, c.Beta2, c.Eps = d.AdamBeta1, d.AdamBeta2, d.AdamEps
		return direction.NewProdigy[float32](c, n)
	case "dadapt-sgd":
		c := direction.DefaultDAdaptSGD()
		c.Momentum = d.Momentum
		return direction.NewDAdaptSGD[float32](c, n)
	case "dog":
		return direction.NewDoG[float32](direction.DefaultDoG(), n)
	}
	return nil, fmt.Errorf("direction %q: not a peer direction", d.Kind)
}

// validator is a scheduler that steps on a validation loss at each epoch's
// end: the -val methods' schedule.WithValidation and plateau's
// schedule.Plateau.
type validator = schedule.Validator
