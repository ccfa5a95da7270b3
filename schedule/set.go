package schedule

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/salsaopt/salsa/stats"
)

// setter applies one key to a bundle.
type setter struct {
	help string
	bind func(c *Config, key, v string) error
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
		return false, fmt.Errorf("schedule: --set %s=%s: must be true or false", key, v)
	}
	return b, nil
}

func fkey(help string, dst func(c *Config) []*float64) setter {
	return setter{help, func(c *Config, key, v string) error {
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
	return setter{help, func(c *Config, key, v string) error {
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
	return setter{help, func(c *Config, key, v string) error {
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
	"lr0": fkey("initial learning rate α_0 of every method", func(c *Config) []*float64 {
		return []*float64{&c.SASAPlus.LR0, &c.SASA.LR0, &c.SSLS.LR0, &c.Slope.LR0, &c.Cut.LR0, &c.Warmup.LR, &c.Constant.LR}
	}),
	"theta": fkey("θ: window fraction of SASA+, SASA and SLOPE", func(c *Config) []*float64 {
		return []*float64{&c.SASAPlus.Theta, &c.SASA.Theta, &c.Slope.Theta}
	}),
	"delta": fkey("δ: the tests use (1−δ) confidence (SASA+, SASA, SLOPE)", func(c *Config) []*float64 {
		return []*float64{&c.SASAPlus.Delta, &c.SASA.Delta, &c.Slope.Delta}
	}),
	"tau": fkey("τ: drop factor of every drop rule", func(c *Config) []*float64 {
		return []*float64{&c.SASAPlus.Tau, &c.SASA.Tau, &c.Slope.Tau, &c.Cut.Tau, &c.Warmup.Tau, &c.Constant.Tau}
	}),
	"nmin":         ikey("N_min of SASA+ and SASA", func(c *Config) []*int { return []*int{&c.SASAPlus.NMin, &c.SASA.NMin} }),
	"ktest":        ikey("K_test of SASA+ and SASA", func(c *Config) []*int { return []*int{&c.SASAPlus.KTest, &c.SASA.KTest} }),
	"warmup":       ikey("steps before SASA+, SASA or SLOPE may drop", func(c *Config) []*int { return []*int{&c.SASAPlus.Warmup, &c.SASA.Warmup, &c.Slope.Warmup} }),
	"salsa_warmup": ikey("steps before SASA+ may drop inside SALSA", func(c *Config) []*int { return []*int{&c.SALSAWarmup} }),
	"sign_check":   bkey("SASA+: require the two half-window means to share a sign (statopt)", func(c *Config) []*bool { return []*bool{&c.SASAPlus.SignCheck} }),
	"composite":    bkey("SASA+: composite test before the first drop (statopt)", func(c *Config) []*bool { return []*bool{&c.SASAPlus.Composite} }),
	"divide_lr": bkey("drops divide by 1/τ as statopt does", func(c *Config) []*bool {
		return []*bool{&c.SASAPlus.DivideLR, &c.SASA.DivideLR, &c.Slope.DivideLR, &c.Cut.DivideLR}
	}),
	"keep_momentum": bkey("do not zero the momentum on a drop", func(c *Config) []*bool {
		return []*bool{&c.SASAPlus.KeepMomentum, &c.SASA.KeepMomentum, &c.Slope.KeepMomentum}
	}),
	"zeta":            fkey("ζ: SASA's equivalence margin, relative to ν̄", func(c *Config) []*float64 { return []*float64{&c.SASA.Zeta} }),
	"c":               fkey("c: SSLS's sufficient-decrease constant", func(c *Config) []*float64 { return []*float64{&c.SSLS.C} }),
	"rho_inc":         fkey("ρ_inc: SSLS's first trial is ρ_inc·α", func(c *Config) []*float64 { return []*float64{&c.SSLS.RhoInc} }),
	"rho_dec":         fkey("ρ_dec: SSLS's backtracking factor", func(c *Config) []*float64 { return []*float64{&c.SSLS.RhoDec} }),
	"gamma":           fkey("γ: SSLS's smoothing", func(c *Config) []*float64 { return []*float64{&c.SSLS.Gamma} }),
	"m":               ikey("m: SSLS's maximum number of trials", func(c *Config) []*int { return []*int{&c.SSLS.M} }),
	"accept_equal":    bkey("SSLS accepts equality in the Armijo test (statopt)", func(c *Config) []*bool { return []*bool{&c.SSLS.AcceptEqual} }),
	"slope_theta":     fkey("θ of the SLOPE test alone", func(c *Config) []*float64 { return []*float64{&c.Slope.Theta} }),
	"slope_nmin":      ikey("N_min of the SLOPE test", func(c *Config) []*int { return []*int{&c.Slope.NMin} }),
	"slope_ktest":     ikey("K_test of the SLOPE test (statopt's SALSA: 1)", func(c *Config) []*int { return []*int{&c.Slope.KTest} }),
	"warmup_steps":    ikey("linear warmup length of the warmup schedule", func(c *Config) []*int { return []*int{&c.Warmup.Steps} }),
	"patience":        ikey("w/ val: checks without improvement tolerated before a drop", func(c *Config) []*int { return []*int{&c.Validation.Patience} }),
	"min_delta":       fkey("w/ val: improvement needed, absolute", func(c *Config) []*float64 { return []*float64{&c.Validation.MinDelta} }),
	"force_switch_at": ikey("SALSA: switch to SASA+ at the end of this step (0: never forced)", func(c *Config) []*int { return []*int{&c.ForceSwitchAt} }),
	"variance":        {help: "σ̂ estimator of SASA+ and SASA: iid, bm or olbm"},
	"ls_dir":          {help: "SSLS line-search direction: g or d"},
	"drop_steps":      {help: "constant-and-cut drop steps, comma-separated"},
}

func init() {
	setters["variance"] = setter{setters["variance"].help, func(c *Config, key, v string) error {
		m, err := stats.ParseVarianceMethod(v)
		if err != nil {
			return fmt.Errorf("schedule: --set variance=%s: must be iid, bm or olbm", v)
		}
		c.SASAPlus.Variance, c.SASA.Variance = m, m
		return nil
	}}
	setters["ls_dir"] = setter{setters["ls_dir"].help, func(c *Config, key, v string) error {
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
	setters["drop_steps"] = setter{setters["drop_steps"].help, func(c *Config, key, v string) error {
		var steps []int
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
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
