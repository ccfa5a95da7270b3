// Package replay runs a scheduler over a logged trace: the per-step
// statistics of a training run (trace format of package trace) go in, the
// scheduler's events come out. With the run's own settings it reproduces the
// run's decisions; with other settings it shows what the tests would have
// decided on the same statistics.
package replay

import (
	"fmt"
	"math"
	"slices"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/stats"
	"github.com/salsaopt/salsa/trace"
)

// FromStatopt maps the keyword arguments of a statopt constructor (a
// meta.json's config object) to a method name and a configuration bundle of
// the statopt preset. Keys the schedulers do not use (momentum, qhm_nu,
// weight_decay, logstats, ls_evl) are ignored; settings this package cannot
// reproduce are errors, and so are the settings of a test or a line search
// that the method does not run (leak_ratio for QHM, say). force_var_mode ""
// forces nothing.
func FromStatopt(c *trace.StatoptConfig) (method string, cfg schedule.Config, err error) {
	lr := c.LR
	if !c.Has("lr") {
		return "", cfg, fmt.Errorf("replay: config has no lr")
	}
	cfg, err = schedule.Defaults(schedule.PresetStatopt, 1, 1, lr)
	if err != nil {
		return "", cfg, err
	}
	switch c.Opt {
	case "SASA": // statopt's class SASA implements SASA+
		method = "sasa+"
	case "SALSA":
		method = "salsa"
		if c.Has("auto_switch") && c.AutoSwitch != 1 {
			return "", cfg, fmt.Errorf("replay: config auto_switch = %d: only 1 is supported", c.AutoSwitch)
		}
	case "SSLS":
		method = "ssls"
	case "QHM", "SGD":
		method = "constant"
	default:
		return "", cfg, fmt.Errorf("replay: config opt = %q: must be SASA, SALSA, SSLS, QHM or SGD", c.Opt)
	}
	if err := checkUnread(c, method); err != nil {
		return "", cfg, err
	}
	sp, sl, ls := &cfg.SASAPlus, &cfg.Slope, &cfg.SSLS
	if c.Has("warmup") {
		sp.DropAfter, sl.DropAfter, cfg.SALSADropAfter = c.Warmup, c.Warmup, c.Warmup
	}
	if c.Has("drop_factor") {
		if !(c.DropFactor > 1) || math.IsInf(c.DropFactor, 0) {
			return "", cfg, fmt.Errorf("replay: config drop_factor = %v: must be finite and > 1", c.DropFactor)
		}
		tau := 1 / c.DropFactor
		if c.DropFactor != math.Round(c.DropFactor) && 1/tau != c.DropFactor {
			return "", cfg, fmt.Errorf("replay: config drop_factor = %v: 1/(1/drop_factor) does not round-trip, so the division cannot be reproduced", c.DropFactor)
		}
		sp.Tau, sl.Tau, cfg.Constant.Tau = tau, tau, tau
	}
	if c.Has("significance") {
		sp.Delta, sl.Delta = c.Significance, c.Significance
	}
	mode := c.VarMode
	if c.ForceVarMode != "" { // "" forces nothing
		mode = c.ForceVarMode
	}
	if mode != "" {
		switch mode {
		case "mb", "iid": // statopt's 'mb' falls through to the i.i.d. estimator
			sp.Variance = stats.IID
		case "bm":
			sp.Variance = stats.BM
		case "olbm":
			sp.Variance = stats.OLBM
		default:
			return "", cfg, fmt.Errorf("replay: config var_mode = %q: must be mb, iid, bm or olbm", mode)
		}
	}
	if c.Has("leak_ratio") {
		if c.LeakRatio < 1 {
			return "", cfg, fmt.Errorf("replay: config leak_ratio = %d: must be ≥ 1", c.LeakRatio)
		}
		sp.Theta, sl.Theta = 1/float64(c.LeakRatio), 1/float64(c.LeakRatio)
	}
	if c.Has("minN_stats") {
		sp.NMin, sl.NMin = c.MinNStats, c.MinNStats
	}
	if c.Has("testfreq") {
		sp.KTest = c.TestFreq
	}
	if method == "salsa" || method == "ssls" {
		if !c.Has("gamma") {
			return "", cfg, fmt.Errorf("replay: config has no gamma (SSLS's γ)")
		}
		ls.Gamma = c.Gamma
	}
	if c.Has("ls_sdc") {
		ls.C = c.LSSdc
	}
	if c.Has("ls_inc") {
		ls.RhoInc = c.LSInc
	}
	if c.Has("ls_dec") {
		ls.RhoDec = c.LSDec
	}
	if c.Has("ls_max") {
		ls.M = c.LSMax
	}
	switch c.LSDir {
	case "", "g":
		ls.SearchAlong = schedule.AlongG
	case "d":
		ls.SearchAlong = schedule.AlongD
	default:
		return "", cfg, fmt.Errorf("replay: config ls_dir = %q: must be g or d", c.LSDir)
	}
	if c.LSCos != 0 {
		return "", cfg, fmt.Errorf("replay: config ls_cos = %d: only 0 is supported", c.LSCos)
	}
	return method, cfg, nil
}

// Keys of a statopt config that only some of its methods read.
var (
	testKeys   = []string{"significance", "var_mode", "force_var_mode", "leak_ratio", "minN_stats", "testfreq", "warmup"}
	searchKeys = []string{"gamma", "ls_sdc", "ls_inc", "ls_dec", "ls_max", "ls_dir", "ls_cos"}
)

// checkUnread refuses a key that the method replayed for c.Opt would not
// read: the statistical tests' settings for QHM, SGD and SSLS, the line
// search's for QHM, SGD and SASA, and auto_switch for all but SALSA.
func checkUnread(c *trace.StatoptConfig, method string) error {
	var unread []string
	switch method {
	case "constant":
		unread = append(append(unread, testKeys...), searchKeys...)
	case "ssls":
		unread = testKeys
	case "sasa+":
		unread = searchKeys
	}
	if method != "salsa" {
		unread = append(unread, "auto_switch")
	}
	for _, k := range unread {
		if c.Has(k) {
			return fmt.Errorf("replay: config %s: opt %s does not read it (a setting of %s)", k, c.Opt, readers(k))
		}
	}
	return nil
}

// readers names the statopt methods that read a key of testKeys,
// searchKeys or auto_switch.
func readers(key string) string {
	switch {
	case key == "auto_switch":
		return "SALSA"
	case slices.Contains(searchKeys, key):
		return "SSLS and SALSA"
	}
	return "SASA and SALSA"
}

// Report says how faithfully a replay followed the logged run.
type Report struct {
	Steps int
	// Diverged is the first step whose logged learning rate differs from the
	// scheduler's (0 if none): with other settings than the run's, decisions
	// after it are what the tests would have said had the run used the
	// scheduler's rate at the logged iterates (see Run).
	Diverged           int
	LoggedLR, ReplayLR float64 // the two rates at Diverged
}

// Run feeds every row to s and returns the events it made.
//
// Line searches are answered from the logged η: the logged ratio η/α_{k−1}
// (2, 1 or 1/2 with statopt's defaults) says which trial passed, and each
// trial is answered with a loss that passes or fails the Armijo test
// accordingly (Begin receives a tiny positive ⟨g,s⟩, which no trace records).
// When the scheduler's rate α differs from the logged one α', ⟨x_{k+1},d_k⟩
// is re-expressed for α at the logged x_k and d_k:
// X1D = (x1d + α'·d2) − α·d2, so that Δ_k = ⟨x_k,d_k⟩ − (α/2)‖d_k‖².
func Run(rows []trace.Row, s schedule.Scheduler) ([]schedule.Event, Report, error) {
	return RunValidated(rows, s, nil)
}

// Validation is a validation loss a run reported to its scheduler after
// step Step: a KindValidation event of the run's events. A -val method's
// is reported at an epoch's end ([schedule.Validator]); salsa-probe's with
// ProbeVal where the step asked for it ([schedule.ValAsker]).
type Validation struct {
	Step int
	Loss float64
}

// ValidationsOf returns the validation losses of a run's events, in order.
func ValidationsOf(evs []schedule.Event) []Validation {
	var vs []Validation
	for _, e := range evs {
		if e.Kind == schedule.KindValidation {
			vs = append(vs, Validation{e.Step, e.ValLoss})
		}
	}
	return vs
}

// RunValidated is Run for a scheduler that steps on validation losses (a
// [schedule.Validator]: the -val methods, plateau; or a
// [schedule.ValAsker] that asks: salsa-probe with ProbeVal): the losses of
// vals are reported after their steps, as the run did, so that its
// validation checks and the decisions they make are replayed too. vals
// must be in step order, within the rows; with none it is Run. A step
// whose End asks for a validation loss takes the next of vals, which must
// be that step's.
func RunValidated(rows []trace.Row, s schedule.Scheduler, vals []Validation) ([]schedule.Event, Report, error) {
	var evs []schedule.Event
	var rep Report
	wv, _ := s.(schedule.Validator)
	asks := schedule.AsksVal(s)
	if len(vals) > 0 {
		if wv == nil && !asks {
			return nil, rep, fmt.Errorf("replay: %d validation losses, but %s does not validate (a -val method or plateau does, or salsa-probe with probe_val=1)", len(vals), s.Name())
		}
		last := len(rows)
		if last > 0 {
			last = rows[len(rows)-1].Step
		}
		for i, v := range vals {
			if v.Step < 1 || v.Step > last || (i > 0 && v.Step < vals[i-1].Step) {
				return nil, rep, fmt.Errorf("replay: validation %d is after step %d: steps must be in order and within the trace's 1..%d", i+1, v.Step, last)
			}
		}
	}
	const gd = 1e-300
	for i, row := range rows {
		k := s.Step() + 1
		if row.Step != k {
			return evs, rep, fmt.Errorf("replay: row %d has step %d: want %d (rows must be consecutive from 1)", i+1, row.Step, k)
		}
		if err := checkRate(k, "lr", row.LR); err != nil {
			return evs, rep, err
		}
		if err := checkRate(k, "eta", row.Eta); row.HasEta && err != nil {
			return evs, rep, err
		}
		prevLogged, prevSched := s.LR(), s.LR()
		if i > 0 {
			prevLogged = rows[i-1].LR
		}
		req, err := s.Begin(row.Loss, gd)
		if err != nil {
			return evs, rep, fmt.Errorf("replay: %w", err)
		}
		for req.Eval {
			if !row.HasEta {
				return evs, rep, fmt.Errorf("replay: step %d: %s runs a line search but the trace has no eta", k, s.Name())
			}
			logged, asked := row.Eta/prevLogged, req.Eta/prevSched
			f := row.Loss + math.Max(1, math.Abs(row.Loss))
			if math.Abs(asked/logged-1) < 1e-9 {
				f = row.Loss - math.Max(1, math.Abs(row.Loss))
			}
			if req, err = s.Trial(f); err != nil {
				return evs, rep, fmt.Errorf("replay: %w", err)
			}
		}
		obs := schedule.Observation{X1D: row.X1D, D2: row.D2, X2: row.X2}
		if schedule.AsksNorm(s) && !row.HasX2 {
			return evs, rep, fmt.Errorf("replay: step %d: %s reads ‖x_{k+1}‖² before its decay (probe_norm_cap=1), and the trace has no x2 there: salsa logs ‖x‖² in the x2 column of such a run's steps.csv.gz, and a run trained before it did cannot be replayed", k, s.Name())
		}
		if req.LR != row.LR {
			if rep.Diverged == 0 && math.Abs(req.LR-row.LR) > 1e-12*math.Abs(row.LR) {
				rep.Diverged, rep.LoggedLR, rep.ReplayLR = k, row.LR, req.LR
			}
			// x_{k+1} at the replay's rate from the logged x_{k+1} and d_k:
			// x' = x_{k+1} + (α − α')d_k
			obs.X1D = (row.X1D + row.LR*row.D2) - req.LR*row.D2
			da := row.LR - req.LR
			obs.X2 = row.X2 + 2*da*row.X1D + da*da*row.D2
		}
		res, err := s.End(obs)
		if err != nil {
			return evs, rep, fmt.Errorf("replay: %w", err)
		}
		if res.NeedVal {
			if len(vals) == 0 || vals[0].Step != k {
				return evs, rep, fmt.Errorf("replay: step %d: %s asks for the validation loss, and the run's events have none at this step", k, s.Name())
			}
			loss := vals[0].Loss
			if res, err = schedule.AnswerVal(s, res, func() (float64, error) { return loss, nil }); err != nil {
				return evs, rep, fmt.Errorf("replay: %w", err)
			}
			vals = vals[1:]
		}
		evs = append(evs, res.Events...)
		rep.Steps = k
		for wv != nil && len(vals) > 0 && vals[0].Step == k {
			res, err := wv.Validate(vals[0].Loss)
			if err != nil {
				return evs, rep, fmt.Errorf("replay: %w", err)
			}
			evs = append(evs, res.Events...)
			vals = vals[1:]
		}
		if len(vals) > 0 && vals[0].Step <= k {
			return evs, rep, fmt.Errorf("replay: step %d: the run's events have a validation loss here that %s did not ask for (the replay took another path than the run)", vals[0].Step, s.Name())
		}
	}
	return evs, rep, nil
}

// checkRate checks a row's logged rate: a NaN, ±Inf or non-positive lr or
// eta would make the replay's comparisons false and its line-search
// answers wrong without an error.
func checkRate(k int, name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("replay: step %d: %s = %v: must be finite and > 0", k, name, v)
	}
	return nil
}
