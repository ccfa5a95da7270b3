package plots

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/internal/conformance"

	"github.com/salsaopt/salsa/schedule"
	"github.com/salsaopt/salsa/schedule/schedtest"
	"github.com/salsaopt/salsa/stats"
	"github.com/salsaopt/salsa/trace"
)

// recorder keeps the loss and the statistics a scheduler was given, to write
// them to the trace as salsa train does.
type recorder struct {
	schedule.Scheduler
	loss float64
	obs  schedule.Observation
}

func (r *recorder) Begin(loss, gd float64) (schedule.Request, error) {
	r.loss = loss
	return r.Scheduler.Begin(loss, gd)
}

func (r *recorder) End(o schedule.Observation) (schedule.Result, error) {
	r.obs = o
	return r.Scheduler.End(o)
}

// writeRun runs method on schedtest's noisy quadratic for steps steps and
// writes a run directory in dir: the trace, the events, 100-step epochs
// (test_loss and test_acc are made-up functions of the train loss, for the
// drawing only) and run.json.
func writeRun(t *testing.T, dir, method string, steps int) (schedule.Config, []schedule.Event) {
	t.Helper()
	cfg, err := schedule.Defaults(schedule.PresetPaper, 1000, 10, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schedule.New(method, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Scheduler: s}
	p := schedtest.NewProblem(1, steps)
	var tr bytes.Buffer
	zw := gzip.NewWriter(&tr)
	tw, err := trace.NewTraceWriter(zw)
	if err != nil {
		t.Fatal(err)
	}
	var evs []schedule.Event
	epochs := "epoch,steps,lr,train_loss,test_loss,test_acc,switched,drops,seconds\n"
	sum := 0.0
	for k := 1; k <= steps; k++ {
		res, err := p.Step(rec, k)
		if err != nil {
			t.Fatal(err)
		}
		row := trace.Row{Step: res.Step, LR: res.LR, Loss: rec.loss, X1D: rec.obs.X1D, D2: rec.obs.D2, Eta: res.Eta, HasEta: res.Searched}
		if err := tw.Write(row); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, res.Events...)
		if sum += rec.loss; k%100 == 0 {
			m := sum / 100
			epochs += fmt.Sprintf("%d,%d,%s,%s,%s,%s,0,0,0.5\n", k/100, k, trace.FormatFloat(res.NextLR),
				trace.FormatFloat(m), trace.FormatFloat(1.1*m), trace.FormatFloat(1/(1+m)))
			sum = 0
		}
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var ev bytes.Buffer
	if err := trace.WriteEvents(&ev, evs); err != nil {
		t.Fatal(err)
	}
	rj, err := json.Marshal(map[string]any{"method": method, "schedule": cfg})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{StepsFile: tr.Bytes(), EventsFile: ev.Bytes(), EpochsFile: []byte(epochs), RunFile: rj} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cfg, evs
}

// checkFigures checks that each name has a decodable PNG of at least
// 800×500 pixels and an SVG document, both of non-trivial size.
func checkFigures(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		png, err := os.ReadFile(filepath.Join(dir, n+".png"))
		if err != nil {
			t.Error(err)
			continue
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(png))
		if err != nil || format != "png" || cfg.Width < 800 || cfg.Height < 500 || len(png) < 10000 {
			t.Errorf("%s.png: format %q, %d×%d, %d bytes, err %v", n, format, cfg.Width, cfg.Height, len(png), err)
		}
		svg, err := os.ReadFile(filepath.Join(dir, n+".svg"))
		if err != nil {
			t.Error(err)
			continue
		}
		if s := string(svg); !(strings.HasPrefix(s, "<?xml") || strings.HasPrefix(s, "<svg")) || !strings.Contains(s, "</svg>") || len(s) < 3000 {
			t.Errorf("%s.svg: %d bytes, not an SVG document: %.60q", n, len(s), s)
		}
	}
}

func TestPlotRun(t *testing.T) {
	dir := t.TempDir()
	cfg, evs := writeRun(t, dir, "salsa", 4000)
	var switched, drops, tests int
	for _, e := range evs {
		switch e.Kind {
		case schedule.KindSwitch:
			switched++
		case schedule.KindDrop:
			drops++
		case schedule.KindTest:
			tests++
		}
	}
	if switched != 1 || drops == 0 || tests < 3 {
		t.Fatalf("the toy run has %d switches, %d drops, %d tests: want 1, ≥ 1, ≥ 3 to draw a realistic figure", switched, drops, tests)
	}
	d, err := DrawRunTo(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("PLOTS_KEEP"); out != "" { // for a look at the figures
		DrawRunTo(dir, out)
	}
	if len(d.Files) != 8 || len(d.Skipped) != 0 {
		t.Errorf("wrote %v, skipped %v: want 8 files and nothing skipped", d.Files, d.Skipped)
	}
	checkFigures(t, dir, "lr", "loss", "acc", "stats")

	// The rebuilt windows are the scheduler's: same size and, for the run's
	// estimator (BM, the paper preset), the same σ̂_N as the logged tests.
	r, err := loadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.theta != cfg.SASAPlus.Theta || r.variance != stats.BM || r.method != "salsa" {
		t.Fatalf("run.json read as θ = %v, variance %v, method %q", r.theta, r.variance, r.method)
	}
	checkRebuilt(t, r, 1)
}

// checkRebuilt compares the rebuilt windows with the run's test events: the
// count, and σ̂_N of the run's estimator (index j of methods).
func checkRebuilt(t *testing.T, r *run, j int) {
	t.Helper()
	testAt, dropAt := map[int]bool{}, map[int]bool{}
	var tests []schedule.Event
	for _, e := range r.events {
		switch e.Kind {
		case schedule.KindTest:
			testAt[e.Step] = true
			tests = append(tests, e)
		case schedule.KindDrop:
			dropAt[e.Step] = true
		}
	}
	ts, err := rebuildWindows(r.rows, r.theta, testAt, dropAt)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) == 0 || len(ts) != len(tests) {
		t.Fatalf("%d windows rebuilt for %d tests", len(ts), len(tests))
	}
	for i, e := range tests {
		if ts[i].step != e.Step || ts[i].count != e.Count || math.Abs(ts[i].std[j]-e.Std) > 1e-12*e.Std {
			t.Errorf("test at step %d: rebuilt N = %d, σ̂ = %v; logged N = %d, σ̂ = %v",
				e.Step, ts[i].count, ts[i].std[j], e.Count, e.Std)
		}
	}
}

// TestPlotRebuildConformance rebuilds the windows of statopt runs and
// compares them with statopt's logged tests (count, and std from its
// LeakyBucket.mean_std). θ = 1/leak_ratio and the estimator are those of
// each run's meta.json; statopt's 'mb' mode is the i.i.d. estimator.
func TestPlotRebuildConformance(t *testing.T) {
	dir := (conformance.PublicDir(t) + string(filepath.Separator))
	for _, c := range []struct {
		name  string
		theta float64
		j     int // index in methods
	}{
		{"logreg_salsa_lr1e-1", 1.0 / 8, 0}, // a switch at 801, 13 drops
		{"lsq_sasa_leak4", 1.0 / 4, 0},
		{"lsq_sasa_bm_forced", 1.0 / 8, 1},
		{"logreg_sasa_olbm", 1.0 / 8, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run{theta: c.theta}
			var err error
			if r.rows, err = trace.ReadTraceFile(dir + c.name + ".trace.csv.gz"); err != nil {
				t.Fatal(err)
			}
			if r.events, err = trace.ReadEventsFile(dir + c.name + ".events.csv"); err != nil {
				t.Fatal(err)
			}
			checkRebuilt(t, &r, c.j)
		})
	}
}

func TestPlotNoEvents(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "constant", 300)
	for _, f := range []string{EventsFile, RunFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "figs")
	d, err := DrawRunTo(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, out, "lr", "loss", "acc", "stats")
	if len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0], "θ = 1/8 assumed") {
		t.Errorf("skipped %q: want the note that θ = 1/8 was assumed", d.Skipped)
	}

	// Without the trace, lr and loss come from epochs.csv and stats is skipped.
	if err := os.Remove(filepath.Join(dir, StepsFile)); err != nil {
		t.Fatal(err)
	}
	if d, err = DrawRunTo(dir, out); err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 6 || !strings.HasPrefix(d.Skipped[len(d.Skipped)-1], "stats: no "+StepsFile) {
		t.Errorf("wrote %v, skipped %q: want lr, loss, acc and stats skipped", d.Files, d.Skipped)
	}
}

func TestPlotErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-run")
	if err := DrawRun(missing); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("DrawRun(missing) = %v: want an error naming %s", err, missing)
	}
	empty := t.TempDir()
	if err := DrawRun(empty); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("DrawRun(empty dir) = %v: want an error saying it holds neither file", err)
	}
	if err := os.WriteFile(filepath.Join(empty, EpochsFile), []byte("epoch,steps,train_loss\n1,100,0.5\n2,200,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := DrawRun(empty); err == nil || !strings.Contains(err.Error(), `line 3: column "train_loss": "x"`) {
		t.Errorf("DrawRun(bad epochs.csv) = %v: want the line and column", err)
	}
	if err := DrawCompare([]string{missing}, t.TempDir()); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("DrawCompare with a missing run = %v: want an error naming it", err)
	}
}

func TestPlotCompare(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, m := range []string{"salsa", "sasa+", "constant"} {
		dir := filepath.Join(root, strings.TrimSuffix(m, "+"))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeRun(t, dir, m, 1500)
		dirs = append(dirs, dir)
	}
	out := filepath.Join(root, "cmp")
	d, err := DrawCompareTo(dirs, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 6 || len(d.Skipped) != 0 {
		t.Errorf("wrote %v, skipped %v: want 6 files", d.Files, d.Skipped)
	}
	checkFigures(t, out, "compare_lr", "compare_loss", "compare_acc")
	svg, err := os.ReadFile(filepath.Join(out, "compare_lr.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"salsa", "sasa+", "constant"} {
		if !strings.Contains(string(svg), ">"+m+"<") {
			t.Errorf("compare_lr.svg has no legend entry %q", m)
		}
	}
}

func TestPlotTicks(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {5000, "5000"}, {12500, "12500"}, {0.25, "0.25"}, {1e-5, "1e-5"}, {-1e-3, "-1e-3"}, {2e6, "2e6"}} {
		if got := fmtTick(c.v); got != c.want {
			t.Errorf("fmtTick(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	var labels []string
	for _, tk := range (linTicks{}).Ticks(1, 20000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "5000 10000 15000 20000" {
		t.Errorf("linTicks(1, 20000) labels %q", got)
	}
}

func BenchmarkPlotRun(b *testing.B) {
	dir := os.Getenv("PLOTS_BENCH_RUN")
	if dir == "" {
		b.Skip("set PLOTS_BENCH_RUN to a run directory")
	}
	out := b.TempDir()
	for b.Loop() {
		if _, err := DrawRunTo(dir, out); err != nil {
			b.Fatal(err)
		}
	}
}

// A language model's run (a test_ppl column) gets a perplexity figure, and
// so does a comparison of such runs; a classifier's does not.
func TestPlotPerplexity(t *testing.T) {
	mk := func(ppl bool) string {
		dir := t.TempDir()
		csv := "epoch,steps,lr,train_loss,test_loss,test_acc,test_ppl,val_loss,switched,drops,seconds\n"
		for e := 1; e <= 3; e++ {
			p := ""
			if ppl {
				p = fmt.Sprint(math.Exp(3 - 0.5*float64(e)))
			}
			csv += fmt.Sprintf("%d,%d,0.5,%v,%v,0.3,%s,,0,0,1\n", e, 10*e, 3-0.4*float64(e), 3-0.5*float64(e), p)
		}
		if err := os.WriteFile(filepath.Join(dir, EpochsFile), []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	has := func(d Drawn, name string) bool {
		for _, f := range d.Files {
			if filepath.Base(f) == name {
				return true
			}
		}
		return false
	}
	for _, ppl := range []bool{true, false} {
		dir := mk(ppl)
		d, err := DrawRunTo(dir, dir)
		if err != nil {
			t.Fatal(err)
		}
		if has(d, "ppl.png") != ppl {
			t.Errorf("test_ppl given: %v; ppl.png drawn: %v (%v)", ppl, has(d, "ppl.png"), d.Files)
		}
		out := t.TempDir()
		c, err := DrawCompareTo([]string{dir, mk(ppl)}, out)
		if err != nil {
			t.Fatal(err)
		}
		if has(c, "compare_ppl.png") != ppl {
			t.Errorf("test_ppl given: %v; compare_ppl.png drawn: %v", ppl, has(c, "compare_ppl.png"))
		}
	}
}
