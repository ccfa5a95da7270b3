package compare

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/salsaopt/salsa/gomlx/internal/plots"
	"github.com/salsaopt/salsa/gomlx/internal/train"
	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/trace"
)

// epoch is a row of a run's epochs.csv.
type epoch struct {
	Epoch, Steps                      int
	LR, TestAcc, TestPPL, ValLoss     float64
	ValAcc, Seconds, TrainLoss, Other float64
}

// RunResult is what the report takes from a run's files.
type RunResult struct {
	Epochs []epoch
	Drops  int // drop events in events.csv
	Switch int // the step of the first switch event; 0 if none
	// Average is where a run whose scheduler averages the decay's iterates
	// ended ("average" or "last", its average event's verdict); "" for the others.
	Average    string
	Failed     string
	SecPerStep float64
	// FinalStep is the step the last update took, for a learning-rate-free
	// or schedule-free peer (steps.csv.gz's step_size); 0 for the others.
	FinalStep float64
}

// readEpochs reads epochs.csv by its header's names; an absent column is NaN.
func readEpochs(path string) ([]epoch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	col := map[string]int{}
	var out []epoch
	for line := 1; sc.Scan(); line++ {
		cells := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if line == 1 {
			for i, c := range cells {
				col[c] = i
			}
			continue
		}
		if len(cells) != len(col) {
			return nil, fmt.Errorf("%s: line %d has %d cells: the header has %d", path, line, len(cells), len(col))
		}
		var bad error
		num := func(name string) float64 {
			i, ok := col[name]
			if !ok || cells[i] == "" { // a column this run does not log
				return math.NaN()
			}
			v, err := strconv.ParseFloat(cells[i], 64)
			if err != nil && bad == nil {
				bad = fmt.Errorf("%s: line %d, column %s: %q is not a number", path, line, name, cells[i])
			}
			return v
		}
		e := epoch{Epoch: int(num("epoch")), Steps: int(num("steps")), LR: num("lr"), TestAcc: num("test_acc"),
			TestPPL: num("test_ppl"), ValLoss: num("val_loss"), ValAcc: num("val_acc"), Seconds: num("seconds"), TrainLoss: num("train_loss")}
		if bad != nil {
			return nil, bad
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// readResult reads a run's epochs.csv and events.csv.
func readResult(j *Job) (*RunResult, error) {
	r := &RunResult{Failed: j.failed}
	var err error
	if r.Epochs, err = readEpochs(filepath.Join(j.Dir, "epochs.csv")); err != nil && r.Failed == "" {
		return nil, fmt.Errorf("%s: %w", j.Dir, err)
	}
	evs, err := trace.ReadEventsFile(filepath.Join(j.Dir, "events.csv"))
	if err != nil && r.Failed == "" {
		return nil, fmt.Errorf("%s: %w", j.Dir, err)
	}
	for _, e := range evs {
		switch e.Kind {
		case schedule.KindDrop:
			r.Drops++
		case schedule.KindSwitch:
			if r.Switch == 0 {
				r.Switch = e.Step
			}
		case schedule.KindAverage:
			r.Average = "last"
			if e.Accept {
				r.Average = "average"
			}
		}
	}
	if r.Failed == "" && len(r.Epochs) < j.Opts.Epochs {
		return nil, fmt.Errorf("%s: epochs.csv has %d of the %d epochs", j.Dir, len(r.Epochs), j.Opts.Epochs)
	}
	if n := len(r.Epochs); n > 0 && r.Epochs[n-1].Steps > 0 {
		r.SecPerStep = r.Epochs[n-1].Seconds / float64(r.Epochs[n-1].Steps)
	}
	if r.Failed == "" && j.plan.LogsStepSize() { // the other runs' steps.csv.gz has no step_size: not read
		rows, err := trace.ReadTraceFile(filepath.Join(j.Dir, "steps.csv.gz"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", j.Dir, err)
		}
		if n := len(rows); n > 0 && rows[n-1].HasStepSize {
			r.FinalStep = rows[n-1].StepSize
		}
	}
	return r, nil
}

// Time is when a run first reached the target.
type Time struct {
	Epochs  int     `json:"epochs"`
	Steps   int     `json:"steps"`
	Seconds float64 `json:"seconds"`
}

// SeedSummary is one run of a row, for summary.json.
type SeedSummary struct {
	Seed    uint64  `json:"seed"`
	Dir     string  `json:"dir"`
	Failed  string  `json:"failed,omitempty"`
	Final   float64 `json:"final"` // the test metric at the last epoch
	Best    float64 `json:"best"`  // the best test metric of any epoch
	FinalLR float64 `json:"final_lr"`
	// FinalStep is the step of the last update of a learning-rate-free or
	// schedule-free peer (steps.csv.gz's step_size), absent for the others.
	FinalStep float64 `json:"final_step_size,omitempty"`
	Drops     int     `json:"drops"`
	Switch    int     `json:"switch_step,omitempty"`
	// Average: where a run that averages the decay's iterates ended,
	// "average" or "last" (salsa-probe's pick); absent for the others.
	Average    string  `json:"ended_at,omitempty"`
	SecPerStep float64 `json:"seconds_per_step"`
	ToTarget   *Time   `json:"to_target"` // null: not reached
}

// Candidate is an lr0 of a tuned row and its validation metric.
type Candidate struct {
	LR0    float64 `json:"lr0"`
	Val    float64 `json:"val"`              // median over seeds of the final validation metric (a failed seed is the worst)
	Failed int     `json:"failed,omitempty"` // seeds that failed
}

// RowSummary is a row of the report.
type RowSummary struct {
	Name   string      `json:"name"`
	Method string      `json:"method"`
	LR0    float64     `json:"lr0"`
	Tuned  bool        `json:"tuned,omitempty"`
	Tuning []Candidate `json:"tuning,omitempty"`
	// Edge, for a tuned row, is "largest" or "smallest" when the lr0 picked
	// is that end of --lr0s: the best rate may lie beyond the grid.
	Edge  string        `json:"edge,omitempty"`
	Seeds []SeedSummary `json:"seeds"`
}

// EdgeWarning says that a tuned row's lr0 is at an end of its grid, or is
// "" if it is not.
func (rs RowSummary) EdgeWarning() string {
	if rs.Edge == "" {
		return ""
	}
	beyond := "above"
	if rs.Edge == "smallest" {
		beyond = "below"
	}
	return fmt.Sprintf("%s: the lr0 picked, %s, is the %s of --lr0s: the best rate may lie %s the grid; widen it to tell", rs.Name, fmtFloat(rs.LR0), rs.Edge, beyond)
}

// Summary is summary.json: what the report says, for profiles over tasks.
type Summary struct {
	Task       string       `json:"task"`
	Metric     string       `json:"metric"` // test_acc or test_ppl
	Higher     bool         `json:"higher_is_better"`
	Target     float64      `json:"target"`
	TargetRule string       `json:"target_rule"`
	Rows       []RowSummary `json:"rows"`
}

// SummaryFile is the machine-readable report in a compare directory.
const SummaryFile = "summary.json"

// valMetric is a run's final validation metric, oriented so that larger is
// better (accuracy, or minus the perplexity); -Inf for a failed run.
func valMetric(r *RunResult, text bool) float64 {
	if r.Failed != "" || len(r.Epochs) == 0 {
		return math.Inf(-1)
	}
	e := r.Epochs[len(r.Epochs)-1]
	if text {
		return -math.Exp(e.ValLoss)
	}
	return e.ValAcc
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	if math.IsInf(s[n/2-1], 0) || math.IsInf(s[n/2], 0) {
		return s[n/2] // the upper middle: not reached if half did not
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Summarize reads every run's results, tunes the tuned rows' lr0 on
// validation and computes the target and the times to it.
func (g *Grid) Summarize() (*Summary, error) {
	text := train.IsText(g.Cfg.Dataset)
	s := &Summary{Task: g.Cfg.Dataset + "/" + g.Cfg.Model, Metric: "test_acc", Higher: true}
	if text {
		s.Metric, s.Higher = "test_ppl", false
	}
	for _, j := range g.Jobs {
		r, err := readResult(j)
		if err != nil {
			return nil, err
		}
		j.Result = r
	}
	metric := func(e epoch) float64 {
		if text {
			return e.TestPPL
		}
		return e.TestAcc
	}
	better := func(a, b float64) bool { // a strictly better than b
		if s.Higher {
			return a > b
		}
		return a < b
	}
	for _, r := range g.Rows {
		rs := RowSummary{Name: r.Name, Method: r.Method, Tuned: r.Tuned}
		if r.Tuned {
			best := math.Inf(-1)
			for _, lr := range r.LR0s {
				var vals []float64
				failed := 0
				for _, j := range r.Runs[lr] {
					vals = append(vals, valMetric(j.Result, text))
					if j.Result.Failed != "" {
						failed++
					}
				}
				v := median(vals)
				shown := v
				if text {
					shown = -v
				}
				rs.Tuning = append(rs.Tuning, Candidate{LR0: lr, Val: finiteOr(shown), Failed: failed})
				if v > best {
					best, r.Chosen = v, lr
				}
			}
			if math.IsInf(best, -1) || math.IsNaN(best) {
				return nil, fmt.Errorf("%s: no lr0 of --lr0s has a validation metric (every run failed?)", r.Name)
			}
			switch r.Chosen {
			case slices.Max(r.LR0s):
				rs.Edge = "largest"
			case slices.Min(r.LR0s):
				rs.Edge = "smallest"
			}
		}
		rs.LR0 = r.Chosen
		for _, j := range r.Runs[r.Chosen] {
			ss := SeedSummary{Seed: j.Seed, Dir: filepath.Join("runs", j.Name), Failed: j.Result.Failed, SecPerStep: j.Result.SecPerStep,
				Drops: j.Result.Drops, Switch: j.Result.Switch, Average: j.Result.Average, FinalStep: j.Result.FinalStep}
			if es := j.Result.Epochs; len(es) > 0 && ss.Failed == "" {
				last := es[len(es)-1]
				ss.Final, ss.Best, ss.FinalLR = metric(last), metric(last), last.LR
				for _, e := range es {
					if better(metric(e), ss.Best) {
						ss.Best = metric(e)
					}
				}
			}
			rs.Seeds = append(rs.Seeds, ss)
		}
		s.Rows = append(s.Rows, rs)
	}
	// The target: --target, or 99% of the best row's median final metric
	// (1% above it for a perplexity).
	if g.Cfg.Target > 0 {
		s.Target, s.TargetRule = g.Cfg.Target, "given by --target"
	} else {
		best, bestRow := math.NaN(), ""
		for _, rs := range s.Rows {
			m := median(rs.finals())
			if !math.IsNaN(m) && (math.IsNaN(best) || better(m, best)) {
				best, bestRow = m, rs.Name
			}
		}
		if math.IsNaN(best) {
			return nil, fmt.Errorf("no row has a final test metric: every run failed")
		}
		if s.Higher {
			s.Target = 0.99 * best
			s.TargetRule = fmt.Sprintf("99%% of the best final test accuracy in the grid (%.4f: %s, median over seeds)", best, bestRow)
		} else {
			s.Target = 1.01 * best
			s.TargetRule = fmt.Sprintf("1%% above the best final test perplexity in the grid (%.3f: %s, median over seeds)", best, bestRow)
		}
	}
	for ri, r := range g.Rows {
		for si, j := range r.Runs[r.Chosen] {
			ss := &s.Rows[ri].Seeds[si]
			if ss.Failed != "" {
				continue
			}
			for _, e := range j.Result.Epochs {
				if m := metric(e); !math.IsNaN(m) && (m == s.Target || better(m, s.Target)) {
					ss.ToTarget = &Time{Epochs: e.Epoch, Steps: e.Steps, Seconds: e.Seconds}
					break
				}
			}
		}
	}
	return s, nil
}

func finiteOr(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}

// finals are the final test metrics of the seeds that did not fail.
func (rs *RowSummary) finals() []float64 {
	var v []float64
	for _, s := range rs.Seeds {
		if s.Failed == "" {
			v = append(v, s.Final)
		}
	}
	return v
}

// col is a column over the seeds that did not fail.
func (rs *RowSummary) col(f func(SeedSummary) float64) []float64 {
	var v []float64
	for _, s := range rs.Seeds {
		if s.Failed == "" {
			v = append(v, f(s))
		}
	}
	return v
}

// TimeTo is the median over the seeds of the time to target in the given
// unit (seconds, epochs or steps), +Inf where the median seed did not
// reach it (a failed seed never does).
func (rs *RowSummary) TimeTo(unit string) float64 {
	var v []float64
	for _, s := range rs.Seeds {
		t := math.Inf(1)
		if s.ToTarget != nil {
			switch unit {
			case "epochs":
				t = float64(s.ToTarget.Epochs)
			case "steps":
				t = float64(s.ToTarget.Steps)
			default:
				t = s.ToTarget.Seconds
			}
		}
		v = append(v, t)
	}
	return median(v)
}

// medRange formats the median and the range of v: "m [lo, hi]", or "m"
// for one value.
func medRange(v []float64, f func(float64) string) string {
	if len(v) == 0 {
		return "—"
	}
	m := f(median(v))
	if len(v) == 1 {
		return m
	}
	return fmt.Sprintf("%s [%s, %s]", m, f(slices.Min(v)), f(slices.Max(v)))
}

// WriteReport writes report.md and summary.json into the compare directory.
func (g *Grid) WriteReport(s *Summary) error {
	cfg := g.Cfg
	text := !s.Higher
	fmtM := func(v float64) string { return fmt.Sprintf("%.4f", v) }
	mname := "test accuracy"
	if text {
		fmtM, mname = func(v float64) string { return fmt.Sprintf("%.3f", v) }, "test perplexity"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# salsa compare: %s %s\n\n", cfg.Dataset, cfg.Model)
	var lrs []string
	for _, lr := range cfg.LR0s {
		lrs = append(lrs, fmtFloat(lr))
	}
	batch := "the model's default batch"
	if cfg.Batch > 0 {
		batch = fmt.Sprintf("batch %d", cfg.Batch)
	}
	fmt.Fprintf(&b, "%d seed(s) (1…%d), %d epochs, %s, preset %s", cfg.Seeds, cfg.Seeds, cfg.Epochs, batch, cfg.Preset)
	switch {
	case len(lrs) == 0:
		b.WriteString(", each method at its default lr0 (0.01; the learning-rate-free and schedule-free peers at their authors' rate)")
	case len(cfg.Grid) > 0 && cfg.LR0 > 0:
		fmt.Fprintf(&b, ", --lr0s %s for the tuned rows, --lr0 %s for the others", strings.Join(lrs, ","), fmtFloat(cfg.LR0))
	case len(cfg.Grid) > 0:
		fmt.Fprintf(&b, ", --lr0s %s for the tuned rows, the others at their default lr0 (0.01; the learning-rate-free and schedule-free peers at their authors' rate)", strings.Join(lrs, ","))
	default:
		fmt.Fprintf(&b, ", --lr0s %s", strings.Join(lrs, ","))
	}
	if cfg.Limit > 0 {
		fmt.Fprintf(&b, ", --limit %d", cfg.Limit)
	}
	if cfg.TestLimit > 0 {
		fmt.Fprintf(&b, ", --test-limit %d", cfg.TestLimit)
	}
	for _, kv := range cfg.Sets {
		fmt.Fprintf(&b, ", --set %s=%s", kv[0], kv[1])
	}
	if cfg.SweepKey != "" {
		fmt.Fprintf(&b, ", --sweep %s=%s", cfg.SweepKey, strings.Join(cfg.SweepVals, ","))
	}
	fmt.Fprintf(&b, ". Every method of a seed sees the same data in the same order (the per-epoch shuffles come from the seed).\n\n")
	fmt.Fprintf(&b, "Target %s: %s.\n\n", fmtM(s.Target), s.TargetRule)

	// The cheapest row's seconds per step.
	cheap, cheapRow := math.Inf(1), ""
	ownStep := false // a row shows a learning-rate-free method's own step
	for _, rs := range s.Rows {
		if v := median(rs.col(func(x SeedSummary) float64 { return x.SecPerStep })); v > 0 && v < cheap {
			cheap, cheapRow = v, rs.Name
		}
	}
	fmt.Fprintf(&b, "| method | lr0 | final %s | best %s | epochs to target | seconds to target | final lr | drops | switch step | cost per step |\n", mname, mname)
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, rs := range s.Rows {
		name, lr0 := rs.Name, fmtFloat(rs.LR0)
		if rs.Tuned {
			name += " (tuned)"
			lr0 += " (tuned)"
		}
		reached, n := 0, len(rs.Seeds)
		for _, x := range rs.Seeds {
			if x.ToTarget != nil {
				reached++
			}
		}
		to := func(unit string, f func(float64) string) string {
			var v []float64
			for _, x := range rs.Seeds {
				if x.ToTarget != nil {
					v = append(v, map[string]float64{"epochs": float64(x.ToTarget.Epochs), "seconds": x.ToTarget.Seconds}[unit])
				}
			}
			if math.IsInf(rs.TimeTo(unit), 1) {
				if reached == 0 {
					return fmt.Sprintf("not reached (0/%d)", n)
				}
				return fmt.Sprintf("— (%d/%d reached; fastest %s)", reached, n, f(slices.Min(v)))
			}
			out := fmt.Sprintf("%s [%s, %s]", f(rs.TimeTo(unit)), f(slices.Min(v)), f(slices.Max(v)))
			if n == 1 {
				out = f(rs.TimeTo(unit))
			}
			if reached < n {
				out += fmt.Sprintf(" (%d/%d)", reached, n)
			}
			return out
		}
		g3 := func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
		g0 := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		f1 := func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
		sw := "—"
		if v := rs.col(func(x SeedSummary) float64 { return float64(x.Switch) }); slices.ContainsFunc(v, func(x float64) bool { return x > 0 }) {
			sw = medRange(v, g0)
		}
		cost := "—"
		if v := median(rs.col(func(x SeedSummary) float64 { return x.SecPerStep })); v > 0 {
			cost = fmt.Sprintf("%.2f× (%.3g ms)", v/cheap, 1000*v)
		}
		failed := ""
		if k := n - len(rs.finals()); k > 0 {
			failed = fmt.Sprintf(" (%d/%d seeds failed)", k, n)
		}
		finalLR := medRange(rs.col(func(x SeedSummary) float64 { return x.FinalLR }), g3)
		// A learning-rate-free method's own step, where it is not its lr
		// (Schedule-Free's step is its lr).
		if own := rs.col(func(x SeedSummary) float64 { return x.FinalStep }); len(own) > 0 && !slices.Contains(own, 0) &&
			!slices.Equal(own, rs.col(func(x SeedSummary) float64 { return x.FinalLR })) {
			finalLR += "; own step " + medRange(own, g3)
			ownStep = true
		}
		fmt.Fprintf(&b, "| %s | %s | %s%s | %s | %s | %s | %s | %s | %s | %s |\n", name, lr0,
			medRange(rs.finals(), fmtM), failed, medRange(rs.col(func(x SeedSummary) float64 { return x.Best }), fmtM),
			to("epochs", g0), to("seconds", f1),
			finalLR,
			medRange(rs.col(func(x SeedSummary) float64 { return float64(x.Drops) }), g0), sw, cost)
	}
	b.WriteString("\nEach cell is the median [min, max] over the seeds; a failed seed (an error such as a NaN loss, see its failed.txt) counts as not reaching the target and is left out of the other columns. ")
	fmt.Fprintf(&b, "Epochs and seconds to target: the first epoch whose %s reaches the target, and the run's seconds at its end (epochs.csv: training and each epoch's evaluation); (k/n): the seeds that reached it; — where the median seed did not. ", mname)
	b.WriteString("Final lr, drops and switch step (the step at which SALSA switches from SSLS to SASA+; — none) come from epochs.csv and events.csv. ")
	for _, rs := range s.Rows {
		picked, kept := 0, 0
		for _, x := range rs.Seeds {
			if x.Average != "" {
				picked++
			}
			if x.Average == "average" {
				kept++
			}
		}
		if picked > 0 {
			fmt.Fprintf(&b, "%s ended at the average of its decay's iterates in %d of %d seeds, at the last iterate in the others (a paired test on the validation split; events.csv's average event). ", rs.Name, kept, picked)
		}
	}
	if ownStep {
		b.WriteString("Own step: the step the last update of a learning-rate-free or schedule-free method took, on top of its lr (steps.csv.gz's step_size: Prodigy's lr·d_k, DoG's lr·η_t, ...). ")
	}
	if cheapRow != "" {
		fmt.Fprintf(&b, "Cost per step: seconds per step measured from the runs (the last epoch's seconds / steps, so evaluation included), relative to the cheapest row (%s: %.3g ms per step), not the plain step timed in isolation (salsa bench does that); runs that ran at the same time (--jobs) shared the cores.\n", cheapRow, 1000*cheap)
	}
	var tuned []RowSummary
	for _, rs := range s.Rows {
		if rs.Tuned {
			tuned = append(tuned, rs)
		}
	}
	if len(tuned) > 0 {
		vname := "validation accuracy"
		if text {
			vname = "validation perplexity"
		}
		fmt.Fprintf(&b, "\n## Tuned rows\n\nThese rows' lr0 was picked among --lr0s %s by the final %s (median over the seeds) on the validation split, never the test metric; the row reports the seeds of the lr0 picked.\n\n", strings.Join(lrs, ","), vname)
		fmt.Fprintf(&b, "| row | lr0 | %s | picked |\n|---|---|---|---|\n", vname)
		for _, rs := range tuned {
			for _, c := range rs.Tuning {
				mark := ""
				if c.LR0 == rs.LR0 {
					mark = "yes"
				}
				val := fmtM(c.Val)
				switch n := len(rs.Seeds); {
				case c.Failed == n:
					val = "failed"
				case c.Failed > 0:
					val += fmt.Sprintf(" (%d/%d seeds failed)", c.Failed, n)
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", rs.Name, fmtFloat(c.LR0), val, mark)
			}
		}
		for _, rs := range tuned {
			if w := rs.EdgeWarning(); w != "" {
				fmt.Fprintf(&b, "\n**%s.**\n", w)
			}
		}
	}
	if len(g.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range g.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	var failed []string
	for _, j := range g.Jobs {
		if j.Result != nil && j.Result.Failed != "" {
			failed = append(failed, fmt.Sprintf("- runs/%s: %s", j.Name, j.Result.Failed))
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Failed runs\n\nRemove a run's " + plots.FailedFile + " to try it again.\n\n" + strings.Join(failed, "\n") + "\n")
	}
	b.WriteString("\nFigures: compare_loss, compare_acc (or compare_ppl), compare_lr and compare_test_loss overlay the first seed of each row.\n")
	if err := os.WriteFile(filepath.Join(cfg.Out, "report.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(cfg.Out, SummaryFile), append(js, '\n'), 0o644)
}

// DrawFigures overlays the first seed of each row that has logs.
func (g *Grid) DrawFigures() (plots.Drawn, error) {
	var dirs []string
	for _, r := range g.Rows {
		for _, j := range r.Runs[r.Chosen] {
			if _, err := os.Stat(filepath.Join(j.Dir, "epochs.csv")); err == nil {
				dirs = append(dirs, j.Dir)
				break
			}
		}
	}
	return plots.DrawCompareTo(dirs, g.Cfg.Out)
}
