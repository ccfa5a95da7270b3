package schedule

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/salsaopt/salsa/stats"
)

// setter applies one key to a bundle. fields lists the fields bind writes,
// for [KeyApplies] and [KeysFor].
type setter struct {
	help   string
	bind   func(c *Config, key, v string) error
	fields func(c *Config) []any
}

func parseF(key, v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("schedule: --set %s=%s: not a number", key, v)
	}
	return f, nil
}

func parseI(key, v string) (int, error) {
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("schedule: --set %s=%s: not an integer", key, v)
	}
	return i, nil
}

func parseB(key, v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("schedule: --set %s=%s: must be 1 or 0 (true or false)", key, v)
	}
	return b, nil
}

// anyOf lists the pointers dst returns as []any.
func anyOf[T any](dst func(c *Config) []*T) func(c *Config) []any {
	return func(c *Config) []any {
		var out []any
		for _, p := range dst(c) {
			out = append(out, p)
		}
		return out
	}
}

func fkey(help string, dst func(c *Config) []*float64) setter {
	return setter{help: help, fields: anyOf(dst), bind: func(c *Config, key, v string) error {
		f, err := parseF(key, v)
		if err != nil {
			return err
		}
		for _, p := range dst(c) {
			*p = f
		}
		return nil
	}}
}

func ikey(help string, dst func(c *Config) []*int) setter {
	return setter{help: help, fields: anyOf(dst), bind: func(c *Config, key, v string) error {
		i, err := parseI(key, v)
		if err != nil {
			return err
		}
		for _, p := range dst(c) {
			*p = i
		}
		return nil
	}}
}

func bkey(help string, dst func(c *Config) []*bool) setter {
	return setter{help: help, fields: anyOf(dst), bind: func(c *Config, key, v string) error {
		b, err := parseB(key, v)
		if err != nil {
			return err
		}
		for _, p := range dst(c) {
			*p = b
		}
		return nil
	}}
}

var setters = map[string]setter{
	"lr0": fkey("initial learning rate α_0 of every method (the peak of cosine and wsd)", func(c *Config) []*float64 {
		return []*float64{&c.SASAPlus.LR0, &c.SASA.LR0, &c.SSLS.LR0, &c.Slope.LR0, &c.Cut.LR0, &c.Warmup.LR, &c.Constant.LR,
			&c.Cosine.LR, &c.WSD.LR, &c.Plateau.LR}
	}),
	"theta": fkey("θ: window fraction of SASA+, SASA and SLOPE", func(c *Config) []*float64 {
		return []*float64{&c.SASAPlus.Theta, &c.SASA.Theta, &c.Slope.Theta}
	}),
	"delta": fkey("δ: the tests use (1−δ) confidence (SASA+, SASA, SLOPE)", func(c *Config) []*float64 {
		return []*float64{&c.SASAPlus.Delta, &c.SASA.Delta, &c.Slope.Delta}
	}),
	"tau": fkey("τ: drop factor of every drop rule (plateau's factor)", func(c *Config) []*float64 {
		return []*float64{&c.SASAPlus.Tau, &c.SASA.Tau, &c.Slope.Tau, &c.Cut.Tau, &c.Warmup.Tau, &c.Constant.Tau, &c.Plateau.Factor}
	}),
	"nmin":             ikey("N_min of SASA+ and SASA", func(c *Config) []*int { return []*int{&c.SASAPlus.NMin, &c.SASA.NMin} }),
	"ktest":            ikey("K_test of SASA+ and SASA", func(c *Config) []*int { return []*int{&c.SASAPlus.KTest, &c.SASA.KTest} }),
	"drop_after":       ikey("no drop by SASA+, SASA or SLOPE at steps k ≤ this (statopt's warmup)", func(c *Config) []*int { return []*int{&c.SASAPlus.DropAfter, &c.SASA.DropAfter, &c.Slope.DropAfter} }),
	"salsa_drop_after": ikey("no drop by SASA+ inside SALSA at steps k ≤ this (statopt's SALSA warmup)", func(c *Config) []*int { return []*int{&c.SALSADropAfter} }),
	"sign_check":       bkey("SASA+: require the two half-window means to share a sign (statopt)", func(c *Config) []*bool { return []*bool{&c.SASAPlus.SignCheck} }),
	"composite":        bkey("SASA+: composite test before the first drop (statopt)", func(c *Config) []*bool { return []*bool{&c.SASAPlus.Composite} }),
	"divide_lr": bkey("drops divide by 1/τ as statopt does", func(c *Config) []*bool {
		return []*bool{&c.SASAPlus.DivideLR, &c.SASA.DivideLR, &c.Slope.DivideLR, &c.Cut.DivideLR}
	}),
	"keep_momentum": bkey("do not zero the momentum on a drop", func(c *Config) []*bool {
		return []*bool{&c.SASAPlus.KeepMomentum, &c.SASA.KeepMomentum, &c.Slope.KeepMomentum}
	}),
	"zeta":         fkey("ζ: SASA's equivalence margin, relative to ν̄", func(c *Config) []*float64 { return []*float64{&c.SASA.Zeta} }),
	"c":            fkey("c: SSLS's sufficient-decrease constant", func(c *Config) []*float64 { return []*float64{&c.SSLS.C} }),
	"rho_inc":      fkey("ρ_inc: SSLS's first trial is ρ_inc·α", func(c *Config) []*float64 { return []*float64{&c.SSLS.RhoInc} }),
	"rho_dec":      fkey("ρ_dec: SSLS's backtracking factor", func(c *Config) []*float64 { return []*float64{&c.SSLS.RhoDec} }),
	"gamma":        fkey("γ: SSLS's smoothing", func(c *Config) []*float64 { return []*float64{&c.SSLS.Gamma} }),
	"m":            ikey("m: SSLS's maximum number of trials", func(c *Config) []*int { return []*int{&c.SSLS.M} }),
	"accept_equal": bkey("SSLS accepts equality in the Armijo test (statopt)", func(c *Config) []*bool { return []*bool{&c.SSLS.AcceptEqual} }),
	"slope_theta":  fkey("θ of the SLOPE test alone", func(c *Config) []*float64 { return []*float64{&c.Slope.Theta} }),
	"slope_nmin":   ikey("N_min of the SLOPE test", func(c *Config) []*int { return []*int{&c.Slope.NMin} }),
	"slope_ktest":  ikey("K_test of the SLOPE test (statopt's SALSA: 1)", func(c *Config) []*int { return []*int{&c.Slope.KTest} }),
	"warmup_steps": ikey("linear warmup length of the warmup, cosine and wsd schedules", func(c *Config) []*int {
		return []*int{&c.Warmup.Steps, &c.Cosine.WarmupSteps, &c.WSD.WarmupSteps}
	}),
	"patience": ikey("w/ val and plateau: checks without improvement tolerated before a drop", func(c *Config) []*int {
		return []*int{&c.Validation.Patience, &c.Plateau.Patience}
	}),
	"total_steps":       ikey("cosine, wsd, salsa-budget and salsa-probe: the budget, total optimizer steps", func(c *Config) []*int { return []*int{&c.Cosine.Steps, &c.WSD.Steps, &c.Tail.Steps} }),
	"min_lr":            fkey("cosine and wsd: the rate the decay ends at; plateau: the floor (0)", func(c *Config) []*float64 { return []*float64{&c.Cosine.MinLR, &c.WSD.MinLR, &c.Plateau.MinLR} }),
	"decay_fraction":    fkey("wsd: the linear decay's share of the budget (0.2); salsa-budget and salsa-probe: its least share, when SALSA switches late or never", func(c *Config) []*float64 { return []*float64{&c.WSD.DecayFraction, &c.Tail.Fraction} }),
	"threshold":         fkey("plateau: improvement needed, relative to the best (1e-4)", func(c *Config) []*float64 { return []*float64{&c.Plateau.Threshold} }),
	"cooldown":          ikey("plateau: checks after a drop that do not count as bad (0)", func(c *Config) []*int { return []*int{&c.Plateau.Cooldown} }),
	"min_delta":         fkey("w/ val: improvement needed, absolute", func(c *Config) []*float64 { return []*float64{&c.Validation.MinDelta} }),
	"decay_from_switch": bkey("salsa-budget: begin the linear decay to 0 at SALSA's switch (1, the default), or at the last decay_fraction of the budget only (0; salsa-probe needs 1)", func(c *Config) []*bool { return []*bool{&c.Tail.FromSwitch} }),
	"probe":             bkey("salsa-budget: after the switch, double the rate every 5% of the budget while the window's mean loss is not significantly above the last accepted one's, then decay from the last accepted rate (0, the default; 1: on)", func(c *Config) []*bool { return []*bool{&c.Tail.Probe} }),
	"probe_early":       bkey("salsa-budget with probe=1: start the probe after the warm-up's first 5% of the budget, or at the switch if that comes first, and after a failed rate decay from half the last accepted one, the momentum zeroed (0, the default; 1: on)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeEarly} }),
	"probe_rollback":    bkey("salsa-budget with probe=1: keep the parameters at the end of every accepted window whose last step, and the next, are not outliers, and when a rate fails put them back, the momentum zeroed, before the decay (0, the default; 1: on)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeRollback} }),
	"probe_settle":      bkey("salsa-budget with probe_early=1: start the early probe only once SSLS's rate has risen by less than ×2 over the last 5% of the budget (0, the default; 1: on; salsa-probe has it on)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeSettle} }),
	"probe_retry":       bkey("salsa-budget with probe=1, and salsa-probe: a rate whose window is rejected on its mean gets a second window before it fails (0, the default, also in salsa-probe; 1: on)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeRetry} }),
	"probe_val":         bkey("salsa-budget with probe=1, and salsa-probe: two outliers in a row end the probe only if the validation loss there is above the one at the last accepted window's end; needs a validation split (0, the default; 1: on)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeVal} }),
	"probe_t":           bkey("salsa-budget with probe=1, and salsa-probe: the probe's window test uses Student's t quantile with n − 1 degrees of freedom (n the accepted window's length) instead of the normal 1.645 (0, the default, also in salsa-probe; 1: on)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeT} }),
	"probe_welch":       bkey("salsa-budget with probe=1, and salsa-probe: the probe's window test is Welch's one-sided t-test (δ 0.05) against the accepted window with the lowest mean, instead of the test against the last accepted window with its σ̂ (0, the default, also in salsa-probe; 1: on; not with probe_t=1)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeWelch} }),
	"warmup_guard":      bkey("salsa-budget with probe=1 and probe_rollback=1 (salsa-probe has it on): end the warm-up at the first window of W steps (the probe's) whose mean line-search loss Welch's one-sided test (δ 0.05) finds above the warm-up's best window's, go back to that window's parameters and decay from its rate (0, the default in salsa-budget; 1: on; docs/parity/guard.md)", func(c *Config) []*bool { return []*bool{&c.Tail.WarmupGuard} }),
	"probe_keep_rate":   bkey("salsa-budget with probe_early=1 and probe_rollback=1, and salsa-probe: after a failed rate and the rollback, decay from the rate that reached the parameters put back (the last accepted rate when the next loss confirmed its copy), not half the last accepted rate; a probe that probe_norm_cap ends still decays from half (0, the default and salsa-probe's; 1: on; docs/parity/keep-cap.md)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeKeepRate} }),
	"probe_level_copy":  bkey("salsa-budget with probe_early=1 and probe_rollback=1, not with probe_norm_cap=1 (so not in salsa-probe): after a failed rate, put back the parameters reached at the rate the decay begins from (half the last accepted rate), the copy kept before the last accepted window's, not that window's (0, the default; 1: on; not with probe_keep_rate=1 or probe_backoff other than 2; docs/parity/climb.md)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeLevelCopy} }),
	"probe_norm_cap":    bkey("salsa-budget with probe=1 (salsa-probe has it on): end the probe after an accepted window when the next, at twice the rate, is projected to more than double ‖x‖² (the window's growth times the measured ratio of the last two windows', held to [1, 4]; no cap without a ratio), and decay as after a failed rate without the rollback; the engine reports ‖x‖² each step until the decay (0, the default in salsa-budget; 1: on; not with probe_level_copy=1; docs/parity/norm.md)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeNormCap} }),
	"probe_cap_confirm": bkey("salsa-budget with probe_norm_cap=1 and probe_rollback=1, and salsa-probe: the first loss of a decay the cap began is the loss at the parameters it began from; when it is an outlier against the capped window (more than 4σ̂ above its mean), put back the kept copy, the momentum zeroed, and go on decaying (0, the default and salsa-probe's; 1: on; docs/parity/keep-cap.md)", func(c *Config) []*bool { return []*bool{&c.Tail.ProbeCapConfirm} }),
	"decay_guard":       bkey("salsa-budget with probe=1 (salsa-probe has it on): during the decay, two losses in a row more than 4σ̂ above the probe's last accepted window's mean halve the decay's line and zero the momentum (0, the default in salsa-budget; 1: on; docs/parity/keep-cap.md)", func(c *Config) []*bool { return []*bool{&c.Tail.DecayGuard} }),
	"probe_backoff":     {help: "salsa-budget with probe_early=1, and salsa-probe: after a failed rate, decay from the last accepted rate divided by this (2, the default and salsa-probe's; ≥ 1; not with probe_keep_rate=1)"},
	"average":           bkey("salsa-budget (salsa-probe has it on): keep the average of the decay's iterates and end there if a one-sided paired test on the validation split (δ 0.05) says it is better than the last iterate; needs a validation split (0, the default; 1: on)", func(c *Config) []*bool { return []*bool{&c.Tail.Average} }),
	"warmup_share":      fkey("salsa-budget and salsa-probe: raise SSLS's γ where needed so that its rate can climb ×10⁴ within this share of the budget, γ = max(√(b/n), min(1, 10⁴^(1/(share·T)) − 1)) (0, the default, also in salsa-probe: off; in [0, 1))", func(c *Config) []*float64 { return []*float64{&c.Tail.WarmupShare} }),
	"decay_cuts":        bkey("salsa-budget and salsa-probe: the decay holds its first rate for a third of its steps, then cuts it ×0.1 after each third, instead of the line to 0 (0, the default; 1: on)", func(c *Config) []*bool { return []*bool{&c.Tail.Cuts} }),
	"force_switch_at":   ikey("SALSA: switch to SASA+ at the end of this step (0: never forced)", func(c *Config) []*int { return []*int{&c.ForceSwitchAt} }),
	"variance":          {help: "σ̂ estimator of SASA+ and SASA: iid, bm or olbm"},
	"ls_dir":            {help: "SSLS line-search direction: g (Algorithm 2, statopt) or d (the update's direction d_k)"},
	"drop_steps":        {help: "constant-and-cut drop steps, comma-separated (empty: none)"},
}

func init() {
	setters["variance"] = setter{help: setters["variance"].help, fields: func(c *Config) []any {
		return []any{&c.SASAPlus.Variance, &c.SASA.Variance}
	}, bind: func(c *Config, key, v string) error {
		m, err := stats.ParseVarianceMethod(v)
		if err != nil {
			return fmt.Errorf("schedule: --set variance=%s: must be iid, bm or olbm", v)
		}
		c.SASAPlus.Variance, c.SASA.Variance = m, m
		return nil
	}}
	setters["ls_dir"] = setter{help: setters["ls_dir"].help, fields: func(c *Config) []any {
		return []any{&c.SSLS.SearchAlong}
	}, bind: func(c *Config, key, v string) error {
		switch v {
		case "g":
			c.SSLS.SearchAlong = AlongG
		case "d":
			c.SSLS.SearchAlong = AlongD
		default:
			return fmt.Errorf("schedule: --set ls_dir=%s: must be g or d", v)
		}
		return nil
	}}
	// probe_backoff: TailConfig.ProbeBackoff's 0 means the default, 2, so
	// that a zero TailConfig is salsa-probe's; typed here, 0 is refused
	// with the rest of the range rather than read as 2
	setters["probe_backoff"] = setter{help: setters["probe_backoff"].help, fields: func(c *Config) []any {
		return []any{&c.Tail.ProbeBackoff}
	}, bind: func(c *Config, key, v string) error {
		f, err := parseF(key, v)
		if err != nil {
			return err
		}
		if !validBackoff(f) {
			return fmt.Errorf("schedule: --set %s=%s: must be finite and ≥ 1 (2 is salsa-probe's)", key, v)
		}
		c.Tail.ProbeBackoff = f
		return nil
	}}
	setters["drop_steps"] = setter{help: setters["drop_steps"].help, fields: func(c *Config) []any {
		return []any{&c.Cut.DropSteps, &c.Warmup.DropSteps}
	}, bind: func(c *Config, key, v string) error {
		var steps []int
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				if strings.TrimSpace(v) == "" {
					break // an empty value: no drops
				}
				return fmt.Errorf("schedule: --set drop_steps=%s: an empty item (give steps, as in 100,200, or nothing for no drops)", v)
			}
			i, err := strconv.Atoi(f)
			if err != nil {
				return fmt.Errorf("schedule: --set drop_steps=%s: %q is not an integer", v, f)
			}
			steps = append(steps, i)
		}
		c.Cut.DropSteps, c.Warmup.DropSteps = steps, steps
		return nil
	}}
}

// Set sets one hyperparameter by name, as the CLI's --set key=value does.
// Keys lists the names. A shared name (θ, δ, τ, ...) sets it in every
// method that has it. The bundle is not validated here: New validates the
// method's configuration and names the field.
func (c *Config) Set(key, value string) error {
	s, ok := setters[key]
	if !ok {
		return fmt.Errorf("schedule: --set %s: unknown key; known keys: %s", key, strings.Join(Keys(), ", "))
	}
	return s.bind(c, key, value)
}

// Keys lists the keys Set accepts, sorted.
func Keys() []string {
	ks := make([]string, 0, len(setters))
	for k := range setters {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// KeyHelp describes a key for usage messages.
func KeyHelp(key string) string { return setters[key].help }

// fieldPaths maps the address of every field of c to its path in Config
// ("SASAPlus.NMin", "ForceSwitchAt").
func fieldPaths(c *Config) map[uintptr]string {
	paths := map[uintptr]string{}
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if f.Kind() != reflect.Struct {
			paths[f.Addr().Pointer()] = name
			continue
		}
		for j := range f.NumField() {
			paths[f.Field(j).Addr().Pointer()] = name + "." + f.Type().Field(j).Name
		}
	}
	return paths
}

// keyPaths returns the Config paths a key writes.
func keyPaths(key string) []string { return allKeyPaths()[key] }

// allKeyPaths maps every key to the Config paths it writes, found once
// from the setters' field pointers into one Config.
var allKeyPaths = sync.OnceValue(func() map[string][]string {
	var c Config
	paths := fieldPaths(&c)
	m := make(map[string][]string, len(setters))
	for k, s := range setters {
		for _, p := range s.fields(&c) {
			m[k] = append(m[k], paths[reflect.ValueOf(p).Pointer()])
		}
	}
	return m
})

// dropKeyPath reports whether the Config field at path (as "SASAPlus.Tau")
// shapes only SASA+'s drops inside SALSA: τ, dividing by 1/τ, keeping the
// momentum, and SALSA's no-drop warm-up. A Tail that decays from the switch
// (TailConfig.FromSwitch, salsa-probe's and salsa-budget's default) takes
// the rate from the switch on, so SASA+ never drops and these do nothing.
func dropKeyPath(path string) bool {
	switch path {
	case "SASAPlus.Tau", "SASAPlus.DivideLR", "SASAPlus.KeepMomentum", "SALSADropAfter":
		return true
	}
	return false
}

// usedBy reports whether a method (one of [Methods]) reads the Config field
// at path. SALSA reads SSLS, SASA+ (whose DropAfter is SALSADropAfter),
// the SLOPE test's θ, δ, N_min and K_test, and ForceSwitchAt; salsa-budget
// reads SALSA's and Tail, and salsa-probe the same but the switches it
// fixes ([ProbeKeys]); a -val method also reads Validation.
func usedBy(method, path string) bool {
	top, field, _ := strings.Cut(path, ".")
	if base, ok := strings.CutSuffix(method, "-val"); ok {
		// constant's τ is read only by the drops the wrapper asks for
		return top == "Validation" || usedBy(base, path) || base == "constant" && path == "Constant.Tau"
	}
	switch method {
	case "salsa-budget":
		return top == "Tail" || usedBy("salsa", path)
	case "salsa-probe":
		if _, fixed := probeFixed()[path]; fixed {
			return false
		}
		if dropKeyPath(path) { // its decay begins at the switch (FromSwitch): SASA+ never drops
			return false
		}
		return usedBy("salsa-budget", path)
	case "salsa":
		switch top {
		case "SSLS", "SALSADropAfter", "ForceSwitchAt":
			return true
		case "SASAPlus":
			return field != "DropAfter"
		case "Slope":
			return field == "Theta" || field == "Delta" || field == "NMin" || field == "KTest"
		}
		return false
	case "constant": // τ: only the drops of constant-val
		return top == "Constant" && field != "Tau"
	case "cut":
		return top == "Cut"
	case "warmup":
		return top == "Warmup"
	case "sasa+":
		return top == "SASAPlus"
	case "sasa":
		return top == "SASA"
	case "slope":
		return top == "Slope"
	case "ssls":
		return top == "SSLS"
	case "cosine":
		return top == "Cosine"
	case "wsd":
		return top == "WSD"
	case "plateau":
		return top == "Plateau"
	}
	return false
}

// KeyApplies reports whether setting key changes what method (one of
// [Methods]) does: false for a key the method never reads, such as zeta
// for SASA+ or drop_after inside SALSA (which reads salsa_drop_after).
func KeyApplies(key, method string) bool {
	for _, p := range keyPaths(key) {
		if usedBy(method, p) {
			return true
		}
	}
	return false
}

// IgnoredFromSwitch reports whether key does nothing in salsa-budget when
// its decay begins at the switch (TailConfig.FromSwitch, the default): every
// field of salsa-budget's that it sets shapes only SASA+'s drops, and from
// the switch on the decay takes the rate, so SASA+ never drops. (In
// salsa-probe, which always decays from the switch, [KeyApplies] is false
// for these keys.)
func IgnoredFromSwitch(key string) bool {
	used := false
	for _, p := range keyPaths(key) {
		if usedBy("salsa-budget", p) {
			if !dropKeyPath(p) {
				return false
			}
			used = true
		}
	}
	return used
}

// MethodsOf lists the methods of [Methods] a key applies to.
func MethodsOf(key string) []string {
	var out []string
	for _, m := range Methods {
		if KeyApplies(key, m) {
			out = append(out, m)
		}
	}
	return out
}

// KeysFor lists the keys that set the field a [FieldError] names
// ("SASAPlusConfig.NMin", "CutConfig.DropSteps[1]"), the most specific
// first; inside SALSA, SASA+'s DropAfter is set by salsa_drop_after.
func KeysFor(method, field string) []string {
	typ, name, ok := strings.Cut(field, ".")
	if !ok {
		return nil
	}
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	var top string
	ct := reflect.TypeFor[Config]()
	for i := range ct.NumField() {
		if f := ct.Field(i); f.Type.Name() == typ {
			top = f.Name
		}
	}
	path := top + "." + name
	switch {
	case typ == "SALSAConfig":
		path = name
	case top == "SASAPlus" && name == "DropAfter" && strings.TrimSuffix(method, "-val") == "salsa":
		path = "SALSADropAfter"
	}
	var keys []string
	for _, k := range Keys() {
		if slices.Contains(keyPaths(k), path) {
			keys = append(keys, k)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool { return len(keyPaths(keys[i])) < len(keyPaths(keys[j])) })
	return keys
}

// ProbeKeys lists, sorted, the --set keys of the switches salsa-probe
// fixes: on, those [TailConfig.WithProbe] turns on, and refused, those
// [TailConfig.Validate] refuses beside them (why, by key: Validate's
// error). Both come from WithProbe and Validate themselves, so a switch
// that joins salsa-probe joins them too.
func ProbeKeys() (on []string, refused map[string]error) {
	fixed, paths := probeFixed(), allKeyPaths()
	refused = map[string]error{}
	for _, k := range Keys() {
		if ps := paths[k]; len(ps) == 1 {
			if err, ok := fixed[ps[0]]; ok {
				if err == nil {
					on = append(on, k)
				} else {
					refused[k] = err
				}
			}
		}
	}
	return on, refused
}

// probeFixed maps the path ("Tail.ProbeNormCap") of each switch of
// TailConfig that salsa-probe fixes to nil where [TailConfig.WithProbe]
// turns it on, and to Validate's error where Validate refuses it beside
// those. It is found once, by turning each other switch on in a valid
// WithProbe.
var probeFixed = sync.OnceValue(func() map[string]error {
	base := TailConfig{Steps: 1, Fraction: 0.2, FromSwitch: true}.WithProbe()
	if err := base.Validate(); err != nil {
		panic(fmt.Sprintf("schedule: salsa-probe's own Tail is invalid: %v", err)) // a defect of WithProbe
	}
	fixed := map[string]error{}
	v := reflect.ValueOf(base)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Type.Kind() != reflect.Bool || f.Name == "FromSwitch" { // FromSwitch stays the caller's
			continue
		}
		if v.Field(i).Bool() {
			fixed["Tail."+f.Name] = nil
			continue
		}
		c := base
		reflect.ValueOf(&c).Elem().Field(i).SetBool(true)
		if err := c.Validate(); err != nil {
			fixed["Tail."+f.Name] = err
		}
	}
	return fixed
})
