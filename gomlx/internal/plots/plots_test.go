package plots

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/png"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

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
	return writeRunWith(t, dir, method, steps, nil)
}

// writeRunWith is writeRun with the scheduler's configuration changed by
// set, if not nil.
func writeRunWith(t *testing.T, dir, method string, steps int, set func(*schedule.Config)) (schedule.Config, []schedule.Event) {
	t.Helper()
	cfg, err := schedule.Defaults(schedule.PresetPaper, 1000, 10, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if set != nil {
		set(&cfg)
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
	// run.json as salsa train writes it: plan.options and plan.schedule.
	rj, err := json.Marshal(map[string]any{"plan": map[string]any{"options": map[string]any{"method": method}, "schedule": cfg}})
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
	// No test, hence no statistics figure.
	checkFigures(t, out, "lr", "loss", "acc")
	if len(d.Files) != 6 || len(d.Skipped) != 2 || !strings.Contains(d.Skipped[0], "θ = 1/8 assumed") ||
		d.Skipped[1] != "stats: no stationarity test in "+EventsFile {
		t.Errorf("wrote %v, skipped %q: want lr, loss, acc, the note that θ = 1/8 was assumed and stats skipped", d.Files, d.Skipped)
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
	if _, err := DrawCompareTo([]string{missing}, t.TempDir()); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("DrawCompareTo with a missing run = %v: want an error naming it", err)
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
	if len(d.Files) != 8 || len(d.Skipped) != 0 {
		t.Errorf("wrote %v, skipped %v: want 8 files", d.Files, d.Skipped)
	}
	checkFigures(t, out, "compare_lr", "compare_loss", "compare_test_loss", "compare_acc")
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

// curves returns a figure's series by legend name.
func curves(f *fig) map[string]plotter.XYs {
	got := map[string]plotter.XYs{}
	for _, c := range f.data {
		got[c.name] = c.pts
	}
	return got
}

// renderFig draws f alone as DrawRunTo does, on a canvas it returns.
func renderFig(f *fig) *vgimg.Canvas {
	c := vgimg.NewWith(vgimg.UseWH(figW, figH), vgimg.UseDPI(120))
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	f.render(dc)
	return c
}

// checkLayout checks a drawn figure: every data point lies within the y
// axis, and the legend (if any) covers no point of the data, nor any point
// along its lines.
func checkLayout(t *testing.T, name string, f *fig) {
	t.Helper()
	dc := f.dataArea
	if dc.Max.X <= dc.Min.X {
		t.Fatalf("%s: not drawn", name)
	}
	if w, _ := legendSize(&f.Legend); w > 0 && f.legendBox.Max.X <= f.legendBox.Min.X {
		t.Errorf("%s: the legend has entries but no box", name)
	}
	b := f.legendBox
	in := func(p vg.Point) bool { return p.X >= b.Min.X && p.X <= b.Max.X && p.Y >= b.Min.Y && p.Y <= b.Max.Y }
	tx, ty := f.Transforms(&dc)
	for _, s := range f.data {
		var prev vg.Point
		for i, q := range s.pts {
			if !(q.Y > f.Y.Min && q.Y < f.Y.Max) {
				t.Errorf("%s: %q: point (%v, %v) outside the y axis [%v, %v]", name, s.name, q.X, q.Y, f.Y.Min, f.Y.Max)
			}
			p := vg.Point{X: tx(q.X), Y: ty(q.Y)}
			if in(p) {
				t.Errorf("%s: the legend %v covers %q at (%v, %v)", name, b, s.name, q.X, q.Y)
			}
			if s.joined && i > 0 {
				for k := 1; k < 20; k++ {
					a := float64(k) / 20
					if m := (vg.Point{X: prev.X + vg.Length(a)*(p.X-prev.X), Y: prev.Y + vg.Length(a)*(p.Y-prev.Y)}); in(m) {
						t.Errorf("%s: the legend %v covers the line %q near (%v, %v)", name, b, s.name, q.X, q.Y)
						break
					}
				}
			}
			prev = p
		}
	}
}

// checkRunLayout draws the figures of the run in dir and checks their layout.
func checkRunLayout(t *testing.T, dir string) {
	t.Helper()
	r, err := loadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	figs, _ := runFigs(r)
	for _, nf := range figs {
		renderFig(nf.fig)
		checkLayout(t, nf.name, nf.fig)
	}
	if r.noStats() == "" {
		title, ps, err := statsPlots(r)
		if err != nil {
			t.Fatal(err)
		}
		drawStats(draw.New(vgimg.NewWith(vgimg.UseWH(figW, statsH), vgimg.UseDPI(120))), title, ps)
		for i, f := range ps {
			checkLayout(t, fmt.Sprintf("stats (%c)", 'a'+i), f)
		}
	}
}

func TestPlotRunLayout(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "salsa", 4000)
	checkRunLayout(t, dir)
}

// writeStatsRun writes a run directory of a salsa run with a made-up trace
// of the given length and the given events: Δ_k (x1d; d2 = 0) scatters
// around the mean of the next test, by a tenth of its interval's width.
func writeStatsRun(t *testing.T, dir string, steps int, evs []schedule.Event) {
	t.Helper()
	var tr bytes.Buffer
	zw := gzip.NewWriter(&tr)
	tw, err := trace.NewTraceWriter(zw)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for k := 1; k <= steps; k++ {
		for next < len(evs)-1 && (evs[next].Kind != schedule.KindTest || evs[next].Step < k) {
			next++
		}
		e := evs[next]
		x := e.Mean + (e.Upper-e.Lower)*math.Sin(12.9898*float64(k))
		if err := tw.Write(trace.Row{Step: k, LR: 0.1, Loss: 1, X1D: x}); err != nil {
			t.Fatal(err)
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
	cfg, err := schedule.Defaults(schedule.PresetPaper, 1000, 10, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	rj, err := json.Marshal(map[string]any{"plan": map[string]any{"options": map[string]any{"method": "salsa"}, "schedule": cfg}})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{StepsFile: tr.Bytes(), EventsFile: ev.Bytes(), RunFile: rj} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The statistics figure of a run whose tests after a drop have a mean of
// +0.01 against −0.2 before it, and which ran no test for a long stretch:
// panel (b) shows every interval whole, with a margin, and its legend
// covers none; panel (c) breaks its lines at the stretch.
func TestPlotStatsFitAndGaps(t *testing.T) {
	var evs []schedule.Event
	test := func(step int, mean, hw float64) {
		evs = append(evs, schedule.Event{Step: step, Kind: schedule.KindTest, Mean: mean, Lower: mean - hw, Upper: mean + hw,
			Std: hw, Count: 100, Stationary: step%500 == 0})
	}
	for k := 300; k <= 1000; k += 100 {
		test(k, -0.2, 0.05)
	}
	evs = append(evs, schedule.Event{Step: 1000, Kind: schedule.KindDrop, NewLR: 0.01, Reason: "stationarity"})
	for k := 1100; k <= 1500; k += 100 {
		test(k, 0.01, 0.02)
	}
	for k := 2700; k <= 3000; k += 100 { // no test from 1500 to 2700
		test(k, 0.005, 0.007)
	}
	dir := t.TempDir()
	writeStatsRun(t, dir, 3000, evs)
	checkRunLayout(t, dir)

	r, err := loadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	title, ps, err := statsPlots(r)
	if err != nil {
		t.Fatal(err)
	}
	drawStats(draw.New(vgimg.NewWith(vgimg.UseWH(figW, statsH), vgimg.UseDPI(120))), title, ps)
	if out := os.Getenv("PLOTS_KEEP"); out != "" { // for a look at the figure
		DrawRunTo(dir, out)
	}
	b := ps[1]
	for _, e := range evs {
		if e.Kind != schedule.KindTest {
			continue
		}
		for _, y := range []float64{e.Lower, e.Upper} {
			if v := b.Y.Scale.Normalize(b.Y.Min, b.Y.Max, y); v < 0.02 || v > 0.98 {
				t.Errorf("panel (b): the interval of the test at step %d ends at %v, at %.3f of the axis [%v, %v]: want it within, with a margin",
					e.Step, y, v, b.Y.Min, b.Y.Max)
			}
		}
	}
	c := ps[2]
	late := false
	for _, s := range c.data {
		for i := 1; s.joined && i < len(s.pts); i++ {
			if dx := s.pts[i].X - s.pts[i-1].X; dx > 250 {
				t.Errorf("panel (c): %q joins the tests at steps %v and %v across the stretch without a test", s.name, s.pts[i-1].X, s.pts[i].X)
			}
		}
		for _, q := range s.pts {
			late = late || q.X >= 2700
		}
	}
	if !late {
		t.Error("panel (c): the tests after the stretch are not drawn")
	}
}

// Methods that run no stationarity test get no statistics figure, and the
// skipped list says why.
func TestPlotNoStatsWithoutTests(t *testing.T) {
	for _, m := range []struct{ method, scheduler string }{
		{"shb-hand", "cut"}, {"cut", "cut"}, {"adam-warmup", "warmup"}, {"warmup", "warmup"}, {"constant", "constant"}, {"ssls", "ssls"},
	} {
		dir := t.TempDir()
		writeRun(t, dir, m.scheduler, 1500)
		rj, err := json.Marshal(map[string]any{"plan": map[string]any{"options": map[string]any{"method": m.method}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, RunFile), rj, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := DrawRunTo(dir, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{".png", ".svg"} {
			if _, err := os.Stat(filepath.Join(dir, "stats"+ext)); err == nil {
				t.Errorf("%s: stats%s drawn", m.method, ext)
			}
		}
		want := "stats: no stationarity test in " + EventsFile + " (method " + m.method + ")"
		if len(d.Files) != 6 || !slices.Contains(d.Skipped, want) {
			t.Errorf("%s: wrote %v, skipped %q: want lr, loss and acc, and %q", m.method, d.Files, d.Skipped, want)
		}
	}
}

// addValLoss adds a val_loss column to the run's epochs.csv, as a -val
// method's run has, and returns its values.
func addValLoss(t *testing.T, dir string) []float64 {
	t.Helper()
	path := filepath.Join(dir, EpochsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var vals []float64
	for i := range lines {
		if i == 0 {
			lines[i] += ",val_loss"
			continue
		}
		v := 0.5 + 1/float64(i)
		vals = append(vals, v)
		lines[i] += "," + fmt.Sprint(v)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return vals
}

// The validation loss of the -val methods is in the run's loss figure and
// in a comparison figure of its own, drawn only if some run has one.
func TestPlotValLoss(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		writeRun(t, d, "salsa", 1000)
	}
	vals := addValLoss(t, a)
	r, err := loadRun(a)
	if err != nil {
		t.Fatal(err)
	}
	loss := lossPlot(r)
	found := false
	for _, s := range loss.data {
		if s.name == "validation loss (epoch)" {
			found = true
			if len(s.pts) != len(vals) || s.pts[0].Y != vals[0] {
				t.Errorf("loss figure: validation loss %v, want %v", s.pts, vals)
			}
		}
	}
	if !found {
		t.Error("loss figure: no validation loss")
	}
	checkRunLayout(t, a)

	out := filepath.Join(root, "cmp")
	d, err := DrawCompareTo([]string{a, b}, out)
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, out, "compare_val_loss", "compare_test_loss")
	d, err = DrawCompareTo([]string{b, b}, out+"2")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.Files {
		if strings.Contains(f, "compare_val_loss") {
			t.Errorf("compare_val_loss drawn for runs without val_loss: %v", d.Files)
		}
	}
}

// Each run of a comparison has a style of its own, so that two runs with
// the same curves both stay visible; the legends cover no data; the
// accuracy figure marks each run's drops and switch on its curve.
func TestPlotCompareStyles(t *testing.T) {
	for n := 1; n <= 7; n++ {
		seen := map[string]bool{}
		for i := range n {
			s := styleOf(i, n)
			for _, k := range []string{fmt.Sprint("color", s.line.Color), fmt.Sprint("dashes", s.line.Dashes), fmt.Sprintf("shape %T", s.glyph.Shape)} {
				if seen[k] {
					t.Errorf("%d runs: run %d has the %s of an earlier one", n, i, k)
				}
				seen[k] = true
			}
		}
	}

	root := t.TempDir()
	var runs []*run
	var evs []schedule.Event
	for _, name := range []string{"a", "b", "c"} {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		m := "salsa" // a and b: the same run
		if name == "c" {
			m = "sasa+"
		}
		_, e := writeRun(t, dir, m, 4000)
		if name == "a" {
			evs = e
		}
		r, err := loadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	figs, skipped := compareFigs(runs)
	if len(skipped) != 0 {
		t.Errorf("skipped %v", skipped)
	}
	var names []string
	for _, nf := range figs {
		names = append(names, nf.name)
		c := renderFig(nf.fig)
		checkLayout(t, nf.name, nf.fig)
		// Pixels of each run's color: the first two runs have the same
		// curves, and both must show.
		img := c.Image()
		for i := range 2 {
			r0, g0, b0, _ := plotutil.Color(i).RGBA()
			n := 0
			for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
				for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
					r, g, b, _ := img.At(x, y).RGBA()
					if d := absDiff(r, r0) + absDiff(g, g0) + absDiff(b, b0); d < 3*0x1800 {
						n++
					}
				}
			}
			if n < 400 {
				t.Errorf("%s: %d pixels of run %d's color: want ≥ 400, its line visible beside the same line of the other run", nf.name, n, i)
			}
		}
		if nf.name != "compare_acc" {
			continue
		}
		var drops, switches plotter.XYs
		for _, s := range nf.fig.data {
			switch s.name {
			case "drops: salsa (a)":
				drops = s.pts
			case "switch: salsa (a)":
				switches = s.pts
			}
		}
		var want plotter.XYs
		var wantSwitch []float64
		for _, e := range evs {
			switch e.Kind {
			case schedule.KindDrop:
				want = append(want, plotter.XY{X: float64(e.Step) / 100})
			case schedule.KindSwitch:
				wantSwitch = append(wantSwitch, float64(e.Step)/100)
			}
		}
		if len(drops) != len(want) || len(switches) != len(wantSwitch) || len(switches) == 1 && switches[0].X != wantSwitch[0] {
			t.Errorf("compare_acc: drops marked at %v, switch at %v; want %d drops, the switch at epoch %v", drops, switches, len(want), wantSwitch)
		}
		for i := range min(len(drops), len(want)) {
			// On the curve: between the accuracies of the epochs around it.
			e := int(math.Floor(want[i].X))
			acc := func(k int) float64 { return runs[0].epochs[max(0, min(k, len(runs[0].epochs))-1)].TestAcc }
			lo, hi := math.Min(acc(e), acc(e+1)), math.Max(acc(e), acc(e+1))
			if drops[i].X != want[i].X || drops[i].Y < lo-1e-12 || drops[i].Y > hi+1e-12 {
				t.Errorf("compare_acc: drop %d marked at (%v, %v): want epoch %v, on the curve in [%v, %v]", i, drops[i].X, drops[i].Y, want[i].X, lo, hi)
			}
		}
	}
	if got := strings.Join(names, " "); got != "compare_lr compare_loss compare_test_loss compare_acc" {
		t.Errorf("comparison figures %q", got)
	}
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// Log and symmetric-log axes label at least three values of their range,
// however narrow.
func TestPlotLogTicks(t *testing.T) {
	labels := func(ts []plot.Tick, lo, hi float64) []string {
		var out []string
		for _, tk := range ts {
			if tk.Label != "" && tk.Value >= lo && tk.Value <= hi {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, r := range [][2]float64{{0.03, 0.09}, {0.2, 0.9}, {0.052, 0.058}, {0.033, 0.16}, {0.022, 0.13}, {1e-4, 1}, {0.9, 1.1}, {3e-7, 2}, {40, 65}} {
		if got := labels(logTicks{}.Ticks(r[0], r[1]), r[0], r[1]); len(got) < 3 {
			t.Errorf("log axis [%v, %v]: labels %q: want ≥ 3", r[0], r[1], got)
		}
	}
	for _, r := range []struct{ c, lo, hi float64 }{{0.01, -0.3, -0.17}, {1e-3, -0.025, -0.002}, {1e-3, -1.5, 3}, {1e-4, 0.002, 0.004}, {0.01, -0.03, 0.02}} {
		if got := labels(symlog{r.c}.Ticks(r.lo, r.hi), r.lo, r.hi); len(got) < 3 {
			t.Errorf("symlog(c = %v) axis [%v, %v]: labels %q: want ≥ 3", r.c, r.lo, r.hi, got)
		}
	}
}

// The 17 methods of a full comparison get 17 different colours, and the
// first 7 keep plotutil's.
func TestRunColorsDistinct(t *testing.T) {
	seen := map[color.RGBA]int{}
	for i := 0; i < 17; i++ {
		r, g, b, a := styleOf(i, 17).line.Color.RGBA()
		c := color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: uint8(a >> 8)}
		if j, ok := seen[c]; ok {
			t.Errorf("runs %d and %d share the colour %v", j, i, c)
		}
		seen[c] = i
		if i < 7 && styleOf(i, 17).line.Color != plotutil.Color(i) {
			t.Errorf("run %d: colour %v, want plotutil's %v", i, styleOf(i, 17).line.Color, plotutil.Color(i))
		}
	}
}

// The learning-rate figure of salsa-budget with the rate probe marks every
// probe window at the rate it tested, kept or failed, and names the rate
// the decay starts from and why it began; its title names the point kept at
// the end when the run averaged its decay.
func TestPlotProbe(t *testing.T) {
	dir := t.TempDir()
	_, evs := writeRunWith(t, dir, "salsa-budget", 1500, func(c *schedule.Config) {
		c.SetBudget(1500, 0)
		c.Tail.Probe, c.Tail.ProbeEarly = true, true
	})
	var start, kept, failed plotter.XYs
	var decay schedule.Event
	for _, e := range evs {
		p := plotter.XY{X: float64(e.Step), Y: e.NewLR}
		switch {
		case e.Kind == schedule.KindDecay:
			decay = e
		case e.Kind != schedule.KindProbe:
		case e.Reason == "start":
			start = append(start, p)
		case e.Accept:
			kept = append(kept, p)
		default:
			failed = append(failed, p)
		}
	}
	if len(start) != 1 || len(kept) < 1 || len(failed) != 1 || decay.Step == 0 {
		t.Fatalf("the run has %d probe starts, %d kept and %d failed windows and a decay at step %d: want 1, ≥ 1, 1 and one", len(start), len(kept), len(failed), decay.Step)
	}
	r, err := loadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := lrPlot(r)
	got := curves(f)
	for name, want := range map[string]plotter.XYs{
		"probe start: first rate tested":                           start,
		fmt.Sprintf("probe window (%d): rate kept", len(kept)):     kept,
		fmt.Sprintf("probe window (%d): rate failed", len(failed)): failed,
	} {
		if !slices.Equal(got[name], want) {
			t.Errorf("%q: %v, want %v (figure's series: %v)", name, got[name], want, slices.Collect(maps.Keys(got)))
		}
	}
	// salsa-probe's pick at the end of the budget is in the title
	if strings.Contains(f.Title.Text, "ends at") {
		t.Errorf("title %q without an average event", f.Title.Text)
	}
	for _, c := range []struct {
		accept bool
		want   string
	}{{true, "ends at the average of the decay (validation z = 2.5)"}, {false, "ends at the last iterate (validation z = 2.5)"}} {
		ra := *r
		ra.events = append(slices.Clone(r.events), schedule.Event{Step: 1500, Kind: schedule.KindAverage, Count: 100, Z: 2.5, Accept: c.accept, Reason: "loss"})
		if got := lrPlot(&ra).Title.Text; !strings.HasSuffix(got, ": "+c.want) {
			t.Errorf("title %q, want it to end with %q", got, c.want)
		}
	}
	// a kept window that ended on an outlier has its own mark
	for i, e := range r.events {
		if e.Kind == schedule.KindProbe && e.Accept && e.Reason == "" {
			r.events[i].Reason = schedule.ReasonEndsOnOutlier
			got := curves(lrPlot(r))
			for name, want := range map[string]plotter.XYs{
				fmt.Sprintf("probe window (%d): rate kept", len(kept)-1): slices.DeleteFunc(slices.Clone(kept), func(p plotter.XY) bool { return p.X == float64(e.Step) }),
				"probe window (1): rate kept, outlier last: no copy":     {{X: float64(e.Step), Y: e.NewLR}},
			} {
				if len(want) > 0 && !slices.Equal(got[name], want) {
					t.Errorf("a window ending on an outlier: %q: %v, want %v (figure's series: %v)", name, got[name], want, slices.Collect(maps.Keys(got)))
				}
			}
			r.events[i].Reason = ""
			// and so does the step after it, when its loss at the window's
			// copy is an outlier: the copy is not kept
			c := schedule.Event{Step: e.Step + 1, Kind: schedule.KindProbe, Count: 1, Mean: 10, Prev: e.Mean, Accept: true,
				NewLR: e.NewLR, Reason: schedule.ReasonCandidateOutlier}
			r.events = slices.Insert(slices.Clone(r.events), i+1, c)
			got = curves(lrPlot(r))
			for name, want := range map[string]plotter.XYs{
				fmt.Sprintf("probe window (%d): rate kept", len(kept)): kept,
				"probe (1): outlier at the window's copy: not kept":    {{X: float64(c.Step), Y: c.NewLR}},
			} {
				if !slices.Equal(got[name], want) {
					t.Errorf("an outlier at a window's copy: %q: %v, want %v (figure's series: %v)", name, got[name], want, slices.Collect(maps.Keys(got)))
				}
			}
			r.events = slices.Delete(r.events, i+1, i+2)
			break
		}
	}
	// a failed window retried at the same rate (probe_retry) has its own
	// mark, apart from the failed ones (the run's failed window ends on an
	// outlier, Reason "outlier": any failed window will do)
	retried := false
	for i, e := range r.events {
		if e.Kind == schedule.KindProbe && !e.Accept {
			retried, r.events[i].Reason = true, schedule.ReasonRetry
			got := curves(lrPlot(r))
			if want := (plotter.XYs{{X: float64(e.Step), Y: e.NewLR}}); !slices.Equal(got["probe window (1): rejected, rate tried again"], want) ||
				got[fmt.Sprintf("probe window (%d): rate failed", len(failed))] != nil {
				t.Errorf("a retried window: want it marked %v apart from the failed ones (figure's series: %v)", want, got)
			}
			r.events[i].Reason = e.Reason
			break
		}
	}
	if !retried {
		t.Error("the run has no failed probe window to mark as retried")
	}
	// two outliers overruled by the validation loss (probe_val) have their
	// own mark too, apart from the windows
	for i, e := range r.events {
		if e.Kind == schedule.KindProbe && e.Accept && e.Reason == "" {
			v := schedule.Event{Step: e.Step - 1, Kind: schedule.KindProbe, Count: e.Count - 1, Mean: 10, Prev: e.Prev, Accept: true,
				NewLR: e.NewLR, Reason: schedule.ReasonOverruled}
			r.events = slices.Insert(slices.Clone(r.events), i, v)
			got := curves(lrPlot(r))
			if want := (plotter.XYs{{X: float64(v.Step), Y: v.NewLR}}); !slices.Equal(got["probe (1): two outliers, overruled by the validation loss"], want) ||
				!slices.Equal(got[fmt.Sprintf("probe window (%d): rate kept", len(kept))], kept) {
				t.Errorf("overruled outliers: want them marked %v apart from the kept windows %v (figure's series: %v)", want, kept, got)
			}
			r.events = slices.Delete(r.events, i, i+1)
			// the validation loss it asked for is drawn on the loss figure
			c := schedule.Event{Step: v.Step, Kind: schedule.KindValidation, ValLoss: 1.25, BestLoss: 1.5}
			r.events = slices.Insert(slices.Clone(r.events), i, c)
			if got := curves(lossPlot(r))["validation loss the probe asked for"]; !slices.Equal(got, plotter.XYs{{X: float64(c.Step), Y: 1.25}}) {
				t.Errorf("the loss figure's validation losses of the probe: %v, want step %d at 1.25", got, c.Step)
			}
			r.events = slices.Delete(r.events, i, i+1)
			break
		}
	}
	// the cap's end of the probe, its check's rollback and the decay's
	// guard have marks of their own, none of them a failed window
	extra := []schedule.Event{
		{Step: decay.Step, Kind: schedule.KindProbe, Mean: 500, Prev: 300, NewLR: 4 * decay.NewLR, Reason: schedule.ReasonNormCap},
		{Step: decay.Step + 1, Kind: schedule.KindProbe, Count: 1, Mean: 10, Prev: 1, NewLR: decay.NewLR, Reason: schedule.ReasonCapOutlier},
		{Step: decay.Step + 3, Kind: schedule.KindProbe, Count: 2, Mean: 9, Prev: 1, NewLR: decay.NewLR / 2, Reason: schedule.ReasonDecayGuard},
		{Step: decay.Step + 5, Kind: schedule.KindProbe, Count: 2, Mean: 8, Prev: 1, NewLR: decay.NewLR / 4, Reason: schedule.ReasonDecayGuard},
	}
	withExtra := *r
	withExtra.events = append(slices.Clone(r.events), extra...)
	got = curves(lrPlot(&withExtra))
	for name, want := range map[string]plotter.XYs{
		"norm cap (1): next rate not run":                          {{X: float64(extra[0].Step), Y: extra[0].NewLR}},
		"outlier after the cap (1): copy put back":                 {{X: float64(extra[1].Step), Y: extra[1].NewLR}},
		"decay guard (2): rest of the decay halved":                {{X: float64(extra[2].Step), Y: extra[2].NewLR}, {X: float64(extra[3].Step), Y: extra[3].NewLR}},
		fmt.Sprintf("probe window (%d): rate failed", len(failed)): failed,
	} {
		if !slices.Equal(got[name], want) {
			t.Errorf("the cap's and the guard's marks: %q: %v, want %v (figure's series: %v)", name, got[name], want, slices.Collect(maps.Keys(got)))
		}
	}
	wantLabel := fmt.Sprintf("decay to 0 from %.3g, %s (step %d)", decay.NewLR, decay.Reason, decay.Step)
	var labels []string
	for _, r := range f.labelled {
		labels = append(labels, r.labels...)
	}
	if !slices.Contains(labels, wantLabel) {
		t.Errorf("labels %q, want %q among them", labels, wantLabel)
	}
	checkRunLayout(t, dir)

	// With the decay in cuts (TailConfig.Cuts, read from run.json) the label
	// names that shape instead of the line to 0.
	cutDir := t.TempDir()
	_, cevs := writeRunWith(t, cutDir, "salsa-budget", 1500, func(c *schedule.Config) {
		c.SetBudget(1500, 0)
		c.Tail.Probe, c.Tail.ProbeEarly, c.Tail.Cuts = true, true, true
	})
	cr, err := loadRun(cutDir)
	if err != nil {
		t.Fatal(err)
	}
	var cd schedule.Event
	for _, e := range cevs {
		if e.Kind == schedule.KindDecay {
			cd = e
		}
	}
	wantCuts := fmt.Sprintf("decay in cuts ×0.1 from %.3g, %s (step %d)", cd.NewLR, cd.Reason, cd.Step)
	labels = nil
	for _, r := range lrPlot(cr).labelled {
		labels = append(labels, r.labels...)
	}
	if cd.Step == 0 || !slices.Contains(labels, wantCuts) {
		t.Errorf("with cuts: labels %q, want %q among them", labels, wantCuts)
	}

	// A run without the probe has no probe marks.
	plain := t.TempDir()
	writeRun(t, plain, "salsa", 1500)
	r, err = loadRun(plain)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range lrPlot(r).data {
		if strings.HasPrefix(c.name, "probe") {
			t.Errorf("salsa: %q drawn", c.name)
		}
	}
}

// TestPlotOwnStep: a learning-rate-free peer's steps.csv has the step it
// took (step_size); the run's learning-rate figure draws it beside α_k,
// and the comparison draws that run at it. A run without the column draws
// α_k only.
func TestPlotOwnStep(t *testing.T) {
	root := t.TempDir()
	own, plain := filepath.Join(root, "prodigy"), filepath.Join(root, "salsa")
	for _, d := range []string{own, plain} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeRun(t, plain, "salsa", 1500)
	var tr bytes.Buffer
	zw := gzip.NewWriter(&tr)
	tw, err := trace.NewStepSizeTraceWriter(zw)
	if err != nil {
		t.Fatal(err)
	}
	var want plotter.XYs
	for k := 1; k <= 1500; k++ {
		step := 1e-6 * math.Pow(1.01, float64(k))
		want = append(want, plotter.XY{X: float64(k), Y: step})
		if err := tw.Write(trace.Row{Step: k, LR: 1, Loss: 1 / float64(k), StepSize: step, HasStepSize: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(tw.Flush(), zw.Close(), os.WriteFile(filepath.Join(own, StepsFile), tr.Bytes(), 0o644),
		os.WriteFile(filepath.Join(own, RunFile), []byte(`{"plan": {"options": {"method": "prodigy"}}}`), 0o644)); err != nil {
		t.Fatal(err)
	}
	r, err := loadRun(own)
	if err != nil {
		t.Fatal(err)
	}
	if r.method != "prodigy" {
		t.Fatalf("method %q, want prodigy", r.method)
	}
	if got := curves(lrPlot(r))["α_k·d_k: Prodigy's step"]; !slices.Equal(got, want) {
		t.Errorf("prodigy: own step %d points, want the %d of step_size", len(got), len(want))
	}
	r, err = loadRun(plain)
	if err != nil {
		t.Fatal(err)
	}
	if got := curves(lrPlot(r)); len(got) == 0 || got["the method's own step"] != nil {
		t.Errorf("salsa: curves %v: want α_k and no own step", slices.Collect(maps.Keys(got)))
	}
	// The comparison draws the peer at its own step (x in epochs: 10 steps
	// an epoch in writeRun's epochs.csv, none in the peer's: by step).
	runs := []*run{}
	for _, d := range []string{plain, own} {
		r, err := loadRun(d)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	figs, _ := compareFigs(runs)
	lr := figs[0].fig
	if figs[0].name != "compare_lr" {
		t.Fatalf("first comparison figure %q, want compare_lr", figs[0].name)
	}
	got := curves(lr)
	if _, ok := got["markers: prodigy (its own step)"]; !ok {
		t.Errorf("compare_lr: curves %v: want prodigy's, named for its own step", slices.Collect(maps.Keys(got)))
	}
	if m := got["markers: prodigy (its own step)"]; len(m) > 0 && m[0].Y > 1e-3 {
		t.Errorf("compare_lr: prodigy drawn at %v, want its step_size (≤ 1e-3 at the first marks), not α_k = 1", m[0].Y)
	}
	// A step that is α_k in every row (Schedule-Free's) is not drawn twice.
	sf := filepath.Join(root, "sf")
	var sfTrace bytes.Buffer
	zw = gzip.NewWriter(&sfTrace)
	if tw, err = trace.NewStepSizeTraceWriter(zw); err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 100; k++ {
		lr := min(1, float64(k)/5)
		if err := tw.Write(trace.Row{Step: k, LR: lr, Loss: 1, StepSize: lr, HasStepSize: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(tw.Flush(), zw.Close(), os.Mkdir(sf, 0o755), os.WriteFile(filepath.Join(sf, StepsFile), sfTrace.Bytes(), 0o644)); err != nil {
		t.Fatal(err)
	}
	if r, err = loadRun(sf); err != nil {
		t.Fatal(err)
	}
	if got := curves(lrPlot(r)); len(got) != 1 {
		t.Errorf("a step equal to α_k: curves %v, want α_k alone", slices.Collect(maps.Keys(got)))
	}
}

// The loss figure draws its moving average over n/50 steps. Under 100
// steps that would be one step, the loss itself: the loss is drawn alone.
func TestPlotLossMovingAverage(t *testing.T) {
	for _, c := range []struct {
		steps int
		avg   string // the average's curve, or "" for none
	}{
		{60, ""},
		{99, ""},
		{100, "moving average (2 steps)"},
		{1000, "moving average (20 steps)"},
	} {
		d := t.TempDir()
		writeRun(t, d, "salsa", c.steps)
		r, err := loadRun(d)
		if err != nil {
			t.Fatal(err)
		}
		got := curves(lossPlot(r))
		if len(got["mini-batch loss f_ξk(x_k)"]) != c.steps {
			t.Errorf("%d steps: mini-batch loss has %d points", c.steps, len(got["mini-batch loss f_ξk(x_k)"]))
		}
		var avgs []string
		for name := range got {
			if strings.HasPrefix(name, "moving average") {
				avgs = append(avgs, name)
			}
		}
		if want := []string{c.avg}; c.avg == "" && len(avgs) != 0 || c.avg != "" && !slices.Equal(avgs, want) {
			t.Errorf("%d steps: moving averages %q, want %q", c.steps, avgs, c.avg)
		}
	}
}
