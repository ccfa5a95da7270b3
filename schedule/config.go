package schedule

import (
	"fmt"
	"math"
	"strings"

	"github.com/salsaopt/salsa/stats"
)

// SASAPlusConfig configures SASA+ (paper Algorithm 1, Table 1).
type SASAPlusConfig struct {
	LR0       float64              // α_0 > 0
	Theta     float64              // θ ∈ (0,1]: fraction of the samples since the last drop kept in the window
	Delta     float64              // δ ∈ (0,1): the test uses the (1−δ) confidence interval (eq. (15))
	Tau       float64              // τ ∈ (0,1): α ← τα on a drop
	NMin      int                  // N_min ≥ 3: a test needs N > N_min samples
	KTest     int                  // K_test ≥ 1: test when k mod K_test = 0
	DropAfter int                  // ≥ 0: a drop needs k > DropAfter (statopt's warmup)
	Variance  stats.VarianceMethod // σ̂_N estimator: BM (eq. (22)), OLBM (eq. (23)) or IID

	SignCheck    bool // statopt: also require the two half-window means to share a sign
	Composite    bool // statopt: before the first drop, each half's interval must contain 0
	DivideLR     bool // statopt: α ← α/drop_factor with drop_factor = 1/τ (see drop)
	KeepMomentum bool // do not ask the caller to zero the momentum on a drop
}

// SSLSConfig configures the smoothed stochastic line search (paper Algorithm 2, §3).
type SSLSConfig struct {
	LR0    float64 // α_0 > 0
	C      float64 // c ∈ (0,1): sufficient-decrease constant of the Armijo test
	RhoInc float64 // ρ_inc ≥ 1: the first trial is η = ρ_inc·α_{k−1}
	RhoDec float64 // ρ_dec ∈ (0,1): η ← ρ_dec·η after a failed trial
	Gamma  float64 // γ ∈ [0,1]: α_k = (1−γ)α_{k−1} + γη_k
	M      int     // m ≥ 0: at most m trials per step (0: η = ρ_inc·α untested, as statopt's ls_max=0; Algorithm 2 has m > 0)

	// AcceptEqual accepts a trial with f(x−ηs) = f(x) − cη⟨g,s⟩, as statopt
	// does; Algorithm 2 needs strict decrease.
	AcceptEqual bool
	// SearchAlong is the line-search direction s_k: AlongG (the paper and
	// statopt's ls_dir='g') or AlongD. The scheduler only sees ⟨g,s⟩ and the
	// trial losses; the caller evaluates the trial points along s.
	SearchAlong Along
}

// Along names the line-search direction.
type Along int

const (
	AlongG Along = iota // s_k = g_k (with weight decay)
	AlongD              // s_k = d_k
)

func (a Along) String() string {
	if a == AlongD {
		return "d"
	}
	return "g"
}

// MarshalJSON writes the direction by name, "g" or "d" (statopt's ls_dir).
func (a Along) MarshalJSON() ([]byte, error) {
	if a != AlongG && a != AlongD {
		return nil, fmt.Errorf("schedule: SearchAlong = %d: must be AlongG or AlongD", int(a))
	}
	return []byte(`"` + a.String() + `"`), nil
}

// UnmarshalJSON reads "g" or "d" or, as files written before names were
// used hold, 0 or 1.
func (a *Along) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"g"`, "0":
		*a = AlongG
	case `"d"`, "1":
		*a = AlongD
	default:
		return fmt.Errorf("schedule: ls_dir = %s: must be \"g\" or \"d\"", b)
	}
	return nil
}

// SlopeConfig configures the SLOPE test (paper eq. (16) and appendix
// slope test), used by SALSA to switch and by [Slope] as a drop rule.
// SALSA uses only Theta, Delta, NMin and KTest.
type SlopeConfig struct {
	LR0          float64 // α_0 > 0 (drop rule only)
	Theta        float64 // θ ∈ (0,1]: window fraction, as in SASA+
	Delta        float64 // δ ∈ (0,1): the loss is "decreasing" when the one-sided p-value < δ
	Tau          float64 // τ ∈ (0,1) (drop rule only)
	NMin         int     // ≥ 3: a test needs N > NMin losses
	KTest        int     // ≥ 1: test when k mod KTest = 0 (statopt's SALSA: every step)
	DropAfter    int     // ≥ 0: a drop needs k > DropAfter (drop rule only)
	DivideLR     bool    // as in SASAPlusConfig (drop rule only)
	KeepMomentum bool    // as in SASAPlusConfig (drop rule only)
}

// SASAConfig configures SASA (Lang, Zhang, Xiao 2019), the equivalence-test
// baseline of paper appendix B.1 (eq. (27)): drop when the (1−δ)
// interval of E[Δ] lies inside [−ζν̄, ζν̄], with ν_k = (α/2)‖d_k‖².
type SASAConfig struct {
	LR0          float64
	Theta        float64
	Delta        float64
	Tau          float64
	Zeta         float64 // ζ > 0: relative half-width of the equivalence interval
	NMin         int
	KTest        int
	DropAfter    int
	Variance     stats.VarianceMethod
	DivideLR     bool
	KeepMomentum bool
}

// ConstantConfig is a constant learning rate. Tau is used only when a
// wrapper such as [WithValidation] asks for a drop.
type ConstantConfig struct {
	LR  float64
	Tau float64
}

// CutConfig is the hand-tuned constant-and-cut schedule: α ← τα after each
// step listed in DropSteps (so the new rate applies from the step after).
type CutConfig struct {
	LR0       float64
	Tau       float64
	DropSteps []int // strictly increasing, ≥ 1
	DivideLR  bool
}

// WarmupConfig is a linear warmup to LR over Steps steps (α_k = LR·k/Steps
// for k ≤ Steps), then constant-and-cut at DropSteps; the Adam baseline.
type WarmupConfig struct {
	LR        float64
	Steps     int // ≥ 0; 0 means no warmup
	Tau       float64
	DropSteps []int
}

// ValidationConfig configures [WithValidation]: drop when the validation loss
// has not improved on its best by more than MinDelta for more than Patience
// consecutive checks.
type ValidationConfig struct {
	Patience int     // ≥ 0: 0 drops at the first check without improvement
	MinDelta float64 // ≥ 0, absolute
}

// SALSAConfig composes SSLS, SASA+ and the SLOPE test (paper Algorithm 3).
// The initial rate is SSLS.LR0; SASAPlus.LR0 is ignored.
type SALSAConfig struct {
	SSLS     SSLSConfig
	SASAPlus SASAPlusConfig
	Slope    SlopeConfig
	// NoSlopeSwitch and NoStationaritySwitch disable one of the two switch
	// rules; ForceSwitchAt > 0 switches at the end of that step regardless.
	NoSlopeSwitch        bool
	NoStationaritySwitch bool
	ForceSwitchAt        int
}

// Preset names a coherent set of defaults.
type Preset string

const (
	// PresetPaper is the paper's Table 1 and §3 with BM variance and none of
	// statopt's additions.
	PresetPaper Preset = "paper"
	// PresetStatopt reproduces statopt 0.2 bit for bit, quirks included: its
	// 'mb' variance mode is the i.i.d. estimator, N_min = 1000, leak 8 (θ =
	// 1/8), warmup 1000 (0 in SALSA), strict comparisons, a division of the
	// learning rate, the SLOPE test at every SSLS step of SALSA, the two
	// stabilizers, and the line search along g accepting equality.
	PresetStatopt Preset = "statopt"
)

// Config bundles the configuration of every method for one run.
type Config struct {
	Preset     Preset
	SASAPlus   SASAPlusConfig
	SASA       SASAConfig
	SSLS       SSLSConfig
	Slope      SlopeConfig
	Cut        CutConfig
	Warmup     WarmupConfig
	Constant   ConstantConfig
	Validation ValidationConfig
	// Cosine and WSD need the budget (total steps): see [Config.SetBudget].
	Cosine  CosineConfig
	WSD     WSDConfig
	Plateau PlateauConfig
	// Tail is salsa-budget's decay over the end of the budget; it too needs
	// the budget.
	Tail TailConfig
	// SALSADropAfter replaces SASAPlus.DropAfter inside SALSA (statopt's SALSA
	// default is 0 where its SASA+ default is 1000).
	SALSADropAfter int
	// ForceSwitchAt is SALSAConfig.ForceSwitchAt.
	ForceSwitchAt int
}

// Defaults returns the defaults of a preset for a data set of n examples,
// mini-batch size b and initial learning rate lr0.
//
// Paper (Table 1, §3): N_min = min{1000, ⌈n/b⌉}, raised to 3 (the least
// the configurations accept) when an epoch has fewer steps, K_test =
// min{100, ⌈n/b⌉},
// δ = 0.05, θ = 1/8, τ = 1/10, BM variance; c = 0.05, ρ_inc = 2, ρ_dec = 1/2,
// γ = √(b/n), m = 2. SASA uses ζ = 0.02.
func Defaults(p Preset, n, b int, lr0 float64) (Config, error) {
	if n < 1 {
		return Config{}, fmt.Errorf("schedule: n = %d: the number of training examples must be ≥ 1", n)
	}
	if b < 1 || b > n {
		return Config{}, fmt.Errorf("schedule: b = %d: the mini-batch size must be in [1, n=%d]", b, n)
	}
	if !(lr0 > 0) || math.IsInf(lr0, 0) {
		return Config{}, fmt.Errorf("schedule: lr0 = %v: must be finite and > 0", lr0)
	}
	perEpoch := (n + b - 1) / b
	gamma := math.Sqrt(float64(b) / float64(n))
	c := Config{Preset: p}
	switch p {
	case PresetPaper:
		nmin, ktest := min(1000, perEpoch), min(100, perEpoch)
		nmin = max(nmin, 3)
		c.SASAPlus = SASAPlusConfig{LR0: lr0, Theta: 1.0 / 8, Delta: 0.05, Tau: 0.1,
			NMin: nmin, KTest: ktest, Variance: stats.BM}
		c.SSLS = SSLSConfig{LR0: lr0, C: 0.05, RhoInc: 2, RhoDec: 0.5, Gamma: gamma, M: 2}
		c.Slope = SlopeConfig{LR0: lr0, Theta: 1.0 / 8, Delta: 0.05, Tau: 0.1, NMin: nmin, KTest: ktest}
	case PresetStatopt:
		c.SASAPlus = SASAPlusConfig{LR0: lr0, Theta: 1.0 / 8, Delta: 0.05, Tau: 0.1,
			NMin: 1000, KTest: 100, DropAfter: 1000, Variance: stats.IID,
			SignCheck: true, Composite: true, DivideLR: true}
		c.SSLS = SSLSConfig{LR0: lr0, C: 0.05, RhoInc: 2, RhoDec: 0.5, Gamma: gamma, M: 2, AcceptEqual: true}
		c.Slope = SlopeConfig{LR0: lr0, Theta: 1.0 / 8, Delta: 0.05, Tau: 0.1, NMin: 1000, KTest: 1,
			DropAfter: 1000, DivideLR: true}
	default:
		return Config{}, fmt.Errorf("schedule: preset %q: must be %q or %q", p, PresetPaper, PresetStatopt)
	}
	sp := c.SASAPlus
	c.SASA = SASAConfig{LR0: lr0, Theta: sp.Theta, Delta: sp.Delta, Tau: sp.Tau, Zeta: 0.02,
		NMin: sp.NMin, KTest: sp.KTest, DropAfter: sp.DropAfter, Variance: sp.Variance, DivideLR: sp.DivideLR}
	c.Cut = CutConfig{LR0: lr0, Tau: sp.Tau, DivideLR: sp.DivideLR}
	c.Warmup = WarmupConfig{LR: lr0, Tau: sp.Tau}
	c.Constant = ConstantConfig{LR: lr0, Tau: sp.Tau}
	c.Cosine = CosineConfig{LR: lr0}
	c.WSD = WSDConfig{LR: lr0, DecayFraction: 0.2}
	c.Tail = TailConfig{Fraction: 0.2, FromSwitch: true}
	c.Plateau = DefaultPlateau(lr0)
	return c, nil
}

// SetBudget sets the budget of the schedules that need one ([NeedsBudget]:
// cosine, wsd, salsa-budget, salsa-probe): steps optimizer steps in all, the
// first warmup of them a linear warmup (cosine and wsd). Defaults leaves it
// unset (Steps = 0), which New rejects for them.
func (c *Config) SetBudget(steps, warmup int) {
	c.Cosine.Steps, c.Cosine.WarmupSteps = steps, warmup
	c.WSD.Steps, c.WSD.WarmupSteps = steps, warmup
	c.Tail.Steps = steps
}

// SALSA returns the SALSA configuration of the bundle.
func (c Config) SALSA() SALSAConfig {
	sp := c.SASAPlus
	sp.DropAfter = c.SALSADropAfter
	return SALSAConfig{SSLS: c.SSLS, SASAPlus: sp, Slope: c.Slope, ForceSwitchAt: c.ForceSwitchAt}
}

// Methods lists the names New accepts.
var Methods = []string{"constant", "cut", "warmup", "sasa+", "sasa", "slope", "ssls", "salsa", "salsa-budget",
	"salsa-probe", "constant-val", "sasa+-val", "sasa-val", "slope-val", "salsa-val",
	"cosine", "wsd", "plateau"}

// NeedsBudget reports whether a method of [Methods] reads the budget that
// [Config.SetBudget] sets: cosine, wsd, salsa-budget and salsa-probe.
func NeedsBudget(method string) bool { return KeyApplies("total_steps", method) }

// ForMethod is c with the settings a method fixes: salsa-probe's Tail is
// [TailConfig.WithProbe], and salsa-budget's and salsa-probe's SSLS γ is
// [TailConfig.WarmupGamma]'s. It is the configuration New runs for the
// method; every other method leaves c as it is. It is idempotent, and what
// it returns is what a run records (run.json's schedule), which [Build]
// runs as it is.
func (c Config) ForMethod(method string) Config { return c.fixed(method).derive(method) }

// fixed is c with the switches a method fixes: salsa-probe's Tail is
// [TailConfig.WithProbe].
func (c Config) fixed(method string) Config {
	if method == "salsa-probe" {
		c.Tail = c.Tail.WithProbe()
	}
	return c
}

// derive is c with the values a method derives from others: salsa-budget's
// and salsa-probe's SSLS γ, raised by [TailConfig.WarmupGamma]. Applying it
// again changes nothing, and [Build] applies it too, so that a recorded
// configuration given a larger warmup_share raises γ as New would.
func (c Config) derive(method string) Config {
	if method == "salsa-probe" || method == "salsa-budget" {
		c.SSLS.Gamma = c.Tail.WarmupGamma(c.SSLS.Gamma)
	}
	return c
}

// New builds the scheduler a method names from the bundle (as
// [Config.ForMethod] fixes it). A "-val" suffix wraps it in
// [WithValidation].
func New(method string, c Config, opts ...Option) (Scheduler, error) {
	return Build(method, c.fixed(method), opts...) // Build derives the rest
}

// Build is [New] without the settings [Config.ForMethod] fixes: it runs c
// as given, with only the values the method derives from others (SSLS's γ
// under WarmupShare) worked out again, which leaves a recorded
// configuration as it is. It is for a configuration the method's fixed
// settings were applied to when it was recorded, as a run's run.json
// records them, so that the run replays and resumes as it ran even after
// the method fixes more (salsa-probe took the warm-up guard, then the cap
// probe_norm_cap, on after runs without them; a salsa-probe configuration
// without them builds a Tail without them).
func Build(method string, c Config, opts ...Option) (Scheduler, error) {
	c = c.derive(method)
	if base, ok := strings.CutSuffix(method, "-val"); ok && base != "" {
		in, err := Build(base, c, opts...)
		if err != nil {
			return nil, err
		}
		d, ok := in.(Dropper)
		if !ok {
			return nil, fmt.Errorf("schedule: method %q: %q cannot drop on validation", method, base)
		}
		return NewWithValidation(d, c.Validation, opts...)
	}
	switch method {
	case "constant":
		return NewConstant(c.Constant, opts...)
	case "cut":
		return NewCut(c.Cut, opts...)
	case "warmup":
		return NewWarmup(c.Warmup, opts...)
	case "sasa+":
		return NewSASAPlus(c.SASAPlus, opts...)
	case "sasa":
		return NewSASA(c.SASA, opts...)
	case "slope":
		return NewSlope(c.Slope, opts...)
	case "ssls":
		return NewSSLS(c.SSLS, opts...)
	case "salsa":
		return NewSALSA(c.SALSA(), opts...)
	case "salsa-budget", "salsa-probe":
		in, err := NewSALSA(c.SALSA(), opts...)
		if err != nil {
			return nil, err
		}
		return NewTail(c.Tail, in, opts...)
	case "cosine":
		return NewCosine(c.Cosine, opts...)
	case "wsd":
		return NewWSD(c.WSD, opts...)
	case "plateau":
		return NewPlateau(c.Plateau, opts...)
	}
	return nil, fmt.Errorf("schedule: method %q: must be one of %v", method, Methods)
}

// FieldError is an invalid configuration field: Validate and New return
// one, naming the field as Go code spells it ("SASAPlusConfig.NMin"), its
// value and the valid range. [KeysFor] tells which --set keys set a field.
type FieldError struct {
	Field string // "SASAPlusConfig.NMin", "CutConfig.DropSteps[1]"
	Value any
	Want  string // "must be ≥ 3"
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("schedule: %s = %v: %s", e.Field, e.Value, e.Want)
}

// Validation helpers: each names the field, the value and the valid range.

func checkPos(field string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return &FieldError{field, v, "must be finite and > 0"}
	}
	return nil
}

func checkNonNeg(field string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return &FieldError{field, v, "must be finite and ≥ 0"}
	}
	return nil
}

func checkOpen01(field string, v float64) error {
	if !(v > 0 && v < 1) {
		return &FieldError{field, v, "must be in (0, 1)"}
	}
	return nil
}

func checkTheta(field string, v float64) error {
	if !(v > 0 && v <= 1) {
		return &FieldError{field, v, "must be in (0, 1]"}
	}
	return nil
}

func checkIntMin(field string, v, lo int) error {
	if v < lo {
		return &FieldError{field, v, fmt.Sprintf("must be ≥ %d", lo)}
	}
	return nil
}

func checkVariance(field string, m stats.VarianceMethod) error {
	switch m {
	case stats.IID, stats.BM, stats.OLBM:
		return nil
	}
	return &FieldError{field, int(m), "must be stats.IID, stats.BM or stats.OLBM"}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Validate reports the first invalid field.
func (c SASAPlusConfig) Validate() error {
	return firstErr(
		checkPos("SASAPlusConfig.LR0", c.LR0),
		checkTheta("SASAPlusConfig.Theta", c.Theta),
		checkOpen01("SASAPlusConfig.Delta", c.Delta),
		checkOpen01("SASAPlusConfig.Tau", c.Tau),
		checkIntMin("SASAPlusConfig.NMin", c.NMin, 3),
		checkIntMin("SASAPlusConfig.KTest", c.KTest, 1),
		checkIntMin("SASAPlusConfig.DropAfter", c.DropAfter, 0),
		checkVariance("SASAPlusConfig.Variance", c.Variance))
}

// Validate reports the first invalid field.
func (c SSLSConfig) Validate() error {
	err := firstErr(
		checkPos("SSLSConfig.LR0", c.LR0),
		checkOpen01("SSLSConfig.C", c.C),
		checkOpen01("SSLSConfig.RhoDec", c.RhoDec),
		checkIntMin("SSLSConfig.M", c.M, 0))
	if err != nil {
		return err
	}
	if !(c.RhoInc >= 1) || math.IsInf(c.RhoInc, 0) {
		return &FieldError{"SSLSConfig.RhoInc", c.RhoInc, "must be finite and ≥ 1"}
	}
	if !(c.Gamma >= 0 && c.Gamma <= 1) {
		return &FieldError{"SSLSConfig.Gamma", c.Gamma, "must be in [0, 1]"}
	}
	if c.SearchAlong != AlongG && c.SearchAlong != AlongD {
		return &FieldError{"SSLSConfig.SearchAlong", int(c.SearchAlong), "must be AlongG or AlongD"}
	}
	return nil
}

// Validate reports the first invalid field. SALSA's SLOPE test checks only
// the fields it uses (see validateTest).
func (c SlopeConfig) Validate() error {
	return firstErr(
		checkPos("SlopeConfig.LR0", c.LR0),
		checkOpen01("SlopeConfig.Tau", c.Tau),
		checkIntMin("SlopeConfig.DropAfter", c.DropAfter, 0),
		c.validateTest())
}

func (c SlopeConfig) validateTest() error {
	return firstErr(
		checkTheta("SlopeConfig.Theta", c.Theta),
		checkOpen01("SlopeConfig.Delta", c.Delta),
		checkIntMin("SlopeConfig.NMin", c.NMin, 3),
		checkIntMin("SlopeConfig.KTest", c.KTest, 1))
}

// Validate reports the first invalid field.
func (c SASAConfig) Validate() error {
	return firstErr(
		checkPos("SASAConfig.LR0", c.LR0),
		checkTheta("SASAConfig.Theta", c.Theta),
		checkOpen01("SASAConfig.Delta", c.Delta),
		checkOpen01("SASAConfig.Tau", c.Tau),
		checkPos("SASAConfig.Zeta", c.Zeta),
		checkIntMin("SASAConfig.NMin", c.NMin, 3),
		checkIntMin("SASAConfig.KTest", c.KTest, 1),
		checkIntMin("SASAConfig.DropAfter", c.DropAfter, 0),
		checkVariance("SASAConfig.Variance", c.Variance))
}

// Validate reports the first invalid field.
func (c SALSAConfig) Validate() error {
	sp := c.SASAPlus
	sp.LR0 = c.SSLS.LR0
	return firstErr(c.SSLS.Validate(), sp.Validate(), c.Slope.validateTest(),
		checkIntMin("SALSAConfig.ForceSwitchAt", c.ForceSwitchAt, 0))
}

// Validate reports the first invalid field.
func (c ConstantConfig) Validate() error {
	return firstErr(checkPos("ConstantConfig.LR", c.LR), checkOpen01("ConstantConfig.Tau", c.Tau))
}

func checkSteps(field string, steps []int) error {
	for i, s := range steps {
		if s < 1 || (i > 0 && s <= steps[i-1]) {
			return &FieldError{fmt.Sprintf("%s[%d]", field, i), s, "must be ≥ 1 and strictly increasing"}
		}
	}
	return nil
}

// Validate reports the first invalid field.
func (c CutConfig) Validate() error {
	return firstErr(checkPos("CutConfig.LR0", c.LR0), checkOpen01("CutConfig.Tau", c.Tau),
		checkSteps("CutConfig.DropSteps", c.DropSteps))
}

// Validate reports the first invalid field.
func (c WarmupConfig) Validate() error {
	return firstErr(checkPos("WarmupConfig.LR", c.LR), checkIntMin("WarmupConfig.Steps", c.Steps, 0),
		checkOpen01("WarmupConfig.Tau", c.Tau), checkSteps("WarmupConfig.DropSteps", c.DropSteps))
}

// Validate reports the first invalid field.
func (c ValidationConfig) Validate() error {
	return firstErr(checkIntMin("ValidationConfig.Patience", c.Patience, 0), checkNonNeg("ValidationConfig.MinDelta", c.MinDelta))
}

// drop applies the drop rule α ← τα, or statopt's α ← α/drop_factor with
// drop_factor = 1/τ. For an integer factor 1/τ is within an ulp of it (49:
// 1/(1/49) = 49.00000000000001), so it is rounded back, which makes the
// division bit-exact with statopt for every integer drop_factor. Only a
// factor within four ulps of an integer ≥ 2 is rounded: τ = 0.9999999999
// still drops.
func drop(lr, tau float64, divide bool) float64 {
	if !divide {
		return lr * tau
	}
	f := 1 / tau
	if r := math.Round(f); r >= 2 && math.Abs(f-r) <= 4*(math.Nextafter(r, math.Inf(1))-r) {
		f = r
	}
	return lr / f
}

// dropped is α after one more drop by τ (drop), or an error naming the
// scheduler and the step when the drop takes α below float64's smallest
// normal number. That takes hundreds of drops (about 308 by τ = 0.1 from
// α = 1); α would then lose its precision and soon be 0, which can be neither
// used nor restored, so the caller leaves its state unchanged.
func dropped(who string, k int, lr, tau float64, divide bool) (float64, error) {
	next := drop(lr, tau, divide)
	if next >= minNormal {
		return next, nil
	}
	return 0, fmt.Errorf("schedule: step %d: %s's drop by τ = %v takes α = %v to %v, below float64's smallest normal number (%v)",
		k, who, tau, lr, next, minNormal)
}

// minNormal is float64's smallest normal number, 2⁻¹⁰²².
const minNormal = 0x1p-1022
