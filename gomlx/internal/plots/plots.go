// Package plots draws the figures of a salsa training run from its run
// directory (steps.csv.gz, events.csv, epochs.csv, run.json), each as PNG and
// SVG: the learning rate, the loss, the test accuracy and the SASA+
// statistics panel in the manner of the paper's Figure
// fig:cifar_sasa_statistics, and the comparison of several runs in the manner
// of fig:salsa_cifar10_imagenet. The x axis of per-run figures is the
// optimizer step k; comparisons use epochs when every run has epochs.csv.
// Axes fit the data with a margin, and a legend goes where it covers no
// data (see fig.fitLegend).
package plots

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/salsaopt/salsa/schedule"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Drawn lists the files written and the figures left out, with the reason.
type Drawn struct {
	Files   []string
	Skipped []string
}

// maxPoints bounds the points of a per-step line; longer series are sampled
// with a constant stride.
const maxPoints = 4000

// Figure sizes: one plot, and the three panels of the statistics figure.
const (
	figW, figH = 9 * vg.Inch, 5.5 * vg.Inch
	statsH     = 10 * vg.Inch
)

// DrawRun draws the figures of the run in dir into dir (see [DrawRunTo]).
func DrawRun(dir string) error {
	_, err := DrawRunTo(dir, dir)
	return err
}

// DrawRunTo draws lr, loss, acc, ppl (language models) and stats (runs with
// a SASA+ or SASA test) of the run in dir, as .png and .svg, into the
// directory out, created if needed. A figure whose data the run lacks is
// skipped and listed.
func DrawRunTo(dir, out string) (Drawn, error) {
	var d Drawn
	r, err := loadRun(dir)
	if err != nil {
		return d, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return d, fmt.Errorf("plots: output directory: %w", err)
	}
	d.Skipped = append(d.Skipped, r.notes...)
	figs, skipped := runFigs(r)
	d.Skipped = append(d.Skipped, skipped...)
	for _, nf := range figs {
		if err := d.save(out, nf.name, figW, figH, nf.fig.render); err != nil {
			return d, err
		}
	}
	if why := r.noStats(); why != "" {
		d.Skipped = append(d.Skipped, "stats: "+why)
		return d, nil
	}
	title, panels, err := statsPlots(r)
	if err != nil {
		return d, err
	}
	return d, d.save(out, "stats", figW, statsH, func(c draw.Canvas) { drawStats(c, title, panels) })
}

// namedFig is a figure and the name of its files.
type namedFig struct {
	name string
	fig  *fig
}

// runFigs builds the per-run figures (all but stats) and lists those left out.
func runFigs(r *run) (figs []namedFig, skipped []string) {
	figs = append(figs, namedFig{"lr", lrPlot(r)})
	if f := lossPlot(r); f != nil {
		figs = append(figs, namedFig{"loss", f})
	} else {
		skipped = append(skipped, "loss: no loss in "+StepsFile+" or "+EpochsFile)
	}
	if f := accPlot(r); f != nil {
		figs = append(figs, namedFig{"acc", f})
	} else {
		skipped = append(skipped, "acc: no test_acc in "+EpochsFile)
	}
	if r.has(func(e epochRow) float64 { return e.TestPPL }) {
		figs = append(figs, namedFig{"ppl", pplPlot(r)})
	}
	return figs, skipped
}

// noStats says why the run has no statistics figure, or "" if it has one:
// it needs the trace and at least one SASA+ or SASA test in events.csv
// (methods such as shb-hand or adam-warmup run none, and neither does salsa
// before its switch).
func (r *run) noStats() string {
	if len(r.rows) == 0 {
		return "no " + StepsFile
	}
	for _, e := range r.events {
		if e.Kind == schedule.KindTest || e.Kind == schedule.KindEquivalenceTest {
			return ""
		}
	}
	if r.method != "" {
		return fmt.Sprintf("no stationarity test in %s (method %s)", EventsFile, r.method)
	}
	return "no stationarity test in " + EventsFile
}

// drawStats draws the statistics figure: its title and the three panels,
// their data areas aligned.
func drawStats(c draw.Canvas, title string, panels [3]*fig) {
	sty := textStyle(13)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y - 4}, title)
	c = draw.Crop(c, 0, 0, 0, -sty.Rectangle(title).Size().Y-8)
	tiles := draw.Tiles{Rows: 3, Cols: 1, PadY: 6, PadTop: 2, PadBottom: 2, PadLeft: 4, PadRight: 8}
	ps := [][]*plot.Plot{{panels[0].Plot}, {panels[1].Plot}, {panels[2].Plot}}
	// Making room for a legend changes a y axis, hence the alignment: fit
	// the legends, then align again.
	cs := plot.Align(ps, tiles, c)
	for i, f := range panels {
		f.fitLegend(cs[i][0])
	}
	cs = plot.Align(ps, tiles, c)
	for i, f := range panels {
		f.draw(cs[i][0])
	}
}

// cmpRun is a run in a comparison, with its legend name and style.
type cmpRun struct {
	*run
	name string
	sty  runStyle
}

// DrawCompareTo draws the comparison of the runs in dirs into out, one line
// per run labelled by run.json's label, its method or the directory's name:
// compare_lr, compare_loss, compare_test_loss, compare_acc (with each run's
// drops and switch marked), and compare_val_loss and compare_ppl where some
// run has them.
func DrawCompareTo(dirs []string, out string) (Drawn, error) {
	var d Drawn
	if len(dirs) == 0 {
		return d, fmt.Errorf("plots: no run directories to compare")
	}
	runs := make([]*run, len(dirs))
	for i, dir := range dirs {
		r, err := loadRun(dir)
		if err != nil {
			return d, err
		}
		runs[i] = r
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return d, fmt.Errorf("plots: output directory: %w", err)
	}
	figs, skipped := compareFigs(runs)
	d.Skipped = append(d.Skipped, skipped...)
	for _, nf := range figs {
		if err := d.save(out, nf.name, figW, figH, nf.fig.render); err != nil {
			return d, err
		}
	}
	return d, nil
}

// compareFigs builds the comparison figures of runs and lists those left out.
func compareFigs(runs []*run) (figs []namedFig, skipped []string) {
	count := map[string]int{}
	for _, r := range runs {
		count[r.legend()]++
	}
	cr := make([]cmpRun, len(runs))
	for i, r := range runs {
		name := r.legend()
		if count[name] > 1 {
			name += " (" + r.name + ")"
		}
		cr[i] = cmpRun{r, name, styleOf(i, len(runs))}
	}
	byEpoch := true
	for _, r := range runs {
		byEpoch = byEpoch && r.stepsPerEpoch() > 0
	}
	xlabel := "epoch"
	if !byEpoch {
		xlabel = "step (some runs have no " + EpochsFile + ")"
	}

	lr := newFig("Learning rate", xlabel, "learning rate (log scale)")
	var lrVals []float64
	for _, r := range cr {
		var xs, ys []float64
		if len(r.rows) > 0 {
			scale := 1.0
			if byEpoch {
				scale = 1 / r.stepsPerEpoch()
			}
			// A peer whose step size is partly its own (Prodigy's d_k, DoG's
			// η_t) is drawn at the step it took: its α_k is a constant 1.
			own := r.showsOwnStep()
			if own {
				r.name += " (its own step)"
				lr.Y.Label.Text = "learning rate, or a learning-rate-free method's own step (log scale)"
			}
			for _, row := range r.rows {
				v := row.LR
				if own {
					v = row.StepSize
				}
				xs, ys = append(xs, float64(row.Step)*scale), append(ys, v)
			}
		} else {
			for _, e := range r.epochs {
				x := float64(e.Steps)
				if byEpoch {
					x = float64(e.Epoch)
				}
				xs, ys = append(xs, x), append(ys, e.LR)
			}
		}
		if lr.runLine(r, series(xs, ys, true)) {
			lrVals = append(lrVals, ys...)
		} else {
			skipped = append(skipped, "compare_lr: no learning rate in "+r.dir)
		}
	}
	lr.logY(lrVals)
	figs = append(figs, namedFig{"compare_lr", lr})

	// Per-epoch figures: name, title, y label, the column, log scale, and
	// whether a run without the column is worth a note (the optional
	// columns are not).
	for _, c := range []struct {
		name, title, ylabel string
		col                 func(epochRow) float64
		log, note           bool
	}{
		{"compare_loss", "Training loss per epoch", "training loss (log scale)", func(e epochRow) float64 { return e.TrainLoss }, true, true},
		{"compare_test_loss", "Test loss per epoch", "test loss (log scale)", func(e epochRow) float64 { return e.TestLoss }, true, true},
		{"compare_val_loss", "Validation loss per epoch (the -val methods)", "validation loss (log scale)", func(e epochRow) float64 { return e.ValLoss }, true, false},
		{"compare_acc", "Test accuracy", "test accuracy (fraction)", func(e epochRow) float64 { return e.TestAcc }, false, true},
		{"compare_ppl", "Test perplexity", "test perplexity (log scale)", func(e epochRow) float64 { return e.TestPPL }, true, false},
	} {
		f := newFig(c.title, "epoch", c.ylabel)
		var vals []float64
		lines := 0
		for _, r := range cr {
			xs, ys := r.column(c.col)
			if f.runLine(r, series(xs, ys, c.log)) {
				lines++
				vals = append(vals, ys...)
			} else if c.note {
				skipped = append(skipped, fmt.Sprintf("%s: no %s in %s", c.name, strings.TrimPrefix(c.name, "compare_"), r.dir))
			}
		}
		if lines == 0 {
			if c.note {
				skipped = append(skipped, c.name+": no data in any run")
			}
			continue
		}
		if c.name == "compare_acc" {
			f.markEvents(cr)
		}
		if c.log {
			f.logY(vals)
		} else {
			f.padY(vals)
		}
		figs = append(figs, namedFig{c.name, f})
	}
	return figs, skipped
}

// column returns a column of epochs.csv against the epoch.
func (r *run) column(col func(epochRow) float64) (xs, ys []float64) {
	for _, e := range r.epochs {
		xs, ys = append(xs, float64(e.Epoch)), append(ys, col(e))
	}
	return xs, ys
}

// has reports whether a column of epochs.csv has a value.
func (r *run) has(col func(epochRow) float64) bool {
	for _, e := range r.epochs {
		if !math.IsNaN(col(e)) {
			return true
		}
	}
	return false
}

// runStyle is a run's look in a comparison: a color, a dash pattern and a
// marker shape of its own, and a width that decreases with the run's index,
// so that runs with the same curve all stay visible.
type runStyle struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
	i, n  int // the run's index among n runs
}

// runColors are 19 colours told apart at a glance: plotutil's 7 first, as
// before, then a cyan and Kelly's colours of maximum contrast that differ
// from them, so that an overlay of up to 19 runs (compare has 17 methods)
// repeats none.
var runColors = func() []color.Color {
	cs := make([]color.Color, 0, 19)
	for i := 0; i < 7; i++ {
		cs = append(cs, plotutil.Color(i))
	}
	for _, rgb := range [][3]uint8{
		{0x17, 0xBE, 0xCF}, {0xF3, 0xC3, 0x00}, {0x84, 0x84, 0x82}, {0x8D, 0xB6, 0x00},
		{0x60, 0x4E, 0x97}, {0x65, 0x45, 0x22}, {0xF9, 0x93, 0x79}, {0x2B, 0x3D, 0x26},
		{0xA1, 0xCA, 0xF1}, {0x88, 0x2D, 0x17}, {0xE6, 0x8F, 0xAC}, {0xC2, 0xB2, 0x80},
	} {
		cs = append(cs, color.RGBA{R: rgb[0], G: rgb[1], B: rgb[2], A: 255})
	}
	return cs
}()

func styleOf(i, n int) runStyle {
	c := runColors[i%len(runColors)]
	w := 1.3
	if n > 1 {
		w += 1.4 * float64(n-1-i) / float64(n-1)
	}
	dashes := plotutil.Dashes(i)
	if len(dashes) > 0 { // patterns scaled to the width, and longer, to read well
		d := make([]vg.Length, len(dashes))
		for k, v := range dashes {
			d[k] = v * vg.Length(math.Max(1.2, w/1.4))
		}
		dashes = d
	}
	return runStyle{
		line:  lineStyle(c, vg.Length(w), dashes),
		glyph: draw.GlyphStyle{Color: c, Radius: 3.2, Shape: plotutil.Shape(i)},
		i:     i, n: n,
	}
}

// runLine draws a run's line with its markers and its legend entry; it is
// false if there are no points.
func (f *fig) runLine(r cmpRun, pts plotter.XYs) bool {
	if len(pts) == 0 {
		return false
	}
	f.line("", pts, r.sty.line)
	sc, _ := plotter.NewScatter(markAt(pts, r.sty.i, r.sty.n))
	sc.GlyphStyle = r.sty.glyph
	f.Add(sc)
	f.data = append(f.data, curve{name: "markers: " + r.name, pts: sc.XYs})
	l, _ := plotter.NewLine(pts[:1])
	l.LineStyle = r.sty.line
	f.Legend.Add(r.name, l, sc)
	return true
}

// markAt picks the points of a line that get its run's markers: all of
// them if there are few, else about a dozen, evenly spaced in x and
// staggered by the run's index i of n so that runs with the same curve put
// theirs in different places.
func markAt(pts plotter.XYs, i, n int) plotter.XYs {
	if len(pts) <= 25 {
		return pts
	}
	const count = 12
	x0, x1 := pts[0].X, pts[len(pts)-1].X
	var out plotter.XYs
	last := -1
	for j := range count {
		x := x0 + (x1-x0)*(float64(j)+(float64(i%n)+0.5)/float64(n))/count
		k := sort.Search(len(pts), func(k int) bool { return pts[k].X >= x })
		if k == len(pts) {
			k--
		}
		if k != last {
			out, last = append(out, pts[k]), k
		}
	}
	return out
}

// markEvents marks each run's drops and switch on its curve: at the epoch of
// the event, on the line between the epochs around it.
func (f *fig) markEvents(runs []cmpRun) {
	var nDrops, nSwitches int
	for _, r := range runs {
		spe := r.stepsPerEpoch()
		if spe <= 0 {
			continue
		}
		xs, ys := r.column(func(e epochRow) float64 { return e.TestAcc })
		acc := series(xs, ys, false)
		if len(acc) == 0 {
			continue
		}
		var drops, switches plotter.XYs
		for _, e := range r.events {
			x := float64(e.Step) / spe
			switch e.Kind {
			case schedule.KindDrop:
				drops = append(drops, plotter.XY{X: x, Y: interp(acc, x)})
			case schedule.KindSwitch:
				switches = append(switches, plotter.XY{X: x, Y: interp(acc, x)})
			}
		}
		for _, m := range []struct {
			pts   plotter.XYs
			kind  string
			shape draw.GlyphDrawer
			n     *int
		}{{drops, "drops", triDown{}, &nDrops}, {switches, "switch", diamond{}, &nSwitches}} {
			if len(m.pts) == 0 {
				continue
			}
			sc, _ := plotter.NewScatter(m.pts)
			sc.GlyphStyle = draw.GlyphStyle{Color: r.sty.glyph.Color, Radius: 5, Shape: m.shape}
			f.Add(sc)
			f.data = append(f.data, curve{name: m.kind + ": " + r.name, pts: m.pts})
			*m.n += len(m.pts)
		}
	}
	gray := color.Gray{Y: 110}
	if nDrops > 0 {
		f.Legend.Add("drop (on each run's curve)", glyphThumb{draw.GlyphStyle{Color: gray, Radius: 5, Shape: triDown{}}})
	}
	if nSwitches > 0 {
		f.Legend.Add("switch SSLS→SASA+", glyphThumb{draw.GlyphStyle{Color: gray, Radius: 5, Shape: diamond{}}})
	}
}

// interp is the piecewise-linear value of a curve (increasing x) at x, its
// end values outside it.
func interp(pts plotter.XYs, x float64) float64 {
	k := sort.Search(len(pts), func(k int) bool { return pts[k].X >= x })
	switch {
	case k == 0:
		return pts[0].Y
	case k == len(pts):
		return pts[len(pts)-1].Y
	}
	a, b := pts[k-1], pts[k]
	return a.Y + (b.Y-a.Y)*(x-a.X)/(b.X-a.X)
}

// lrPlot is α_k per step on a log scale, with the switch and the drops.
func lrPlot(r *run) *fig {
	f := newFig(r.title("Learning rate"), stepLabel(r), "learning rate α_k (log scale)")
	var xs, ys []float64
	if len(r.rows) > 0 {
		for _, row := range r.rows {
			xs, ys = append(xs, float64(row.Step)), append(ys, row.LR)
		}
	} else {
		for _, e := range r.epochs {
			xs, ys = append(xs, float64(e.Steps)), append(ys, e.LR)
		}
	}
	f.line("α_k", series(xs, ys, true), lineStyle(plotutil.Color(0), 1.5, nil))
	if r.showsOwnStep() {
		// The peers whose step size is partly their own: the step they took.
		var own []float64
		for _, row := range r.rows {
			own = append(own, row.StepSize)
		}
		f.line(ownStepName(r.method), series(xs, own, true), lineStyle(plotutil.Color(2), 1.5, nil))
		f.Y.Label.Text = "learning rate α_k and the method's own step (log scale)"
		ys = append(ys, own...)
	}
	var dx, dy []float64
	for _, e := range r.events {
		if e.Kind == schedule.KindDrop {
			dx, dy = append(dx, float64(e.Step)), append(dy, e.NewLR)
		}
	}
	if pts := series(dx, dy, true); len(pts) > 0 {
		f.scatter(fmt.Sprintf("drop (%d): new α", len(pts)), pts,
			draw.GlyphStyle{Color: plotutil.Color(1), Radius: 3.5, Shape: draw.PyramidGlyph{}})
		ys = append(ys, dy...)
	}
	ys = append(ys, f.addProbe(r)...)
	f.addMarks(r, false, true)
	if i := slices.IndexFunc(r.events, func(e schedule.Event) bool { return e.Kind == schedule.KindAverage }); i >= 0 {
		f.Title.Text += ": " + averageLabel(r.events[i]) // salsa-probe's pick at the end
	}
	f.logY(ys)
	return f
}

// ownStepName is the legend of a learning-rate-free or schedule-free
// method's own step (steps.csv's step_size, direction.LRAware.EffectiveLR).
func ownStepName(method string) string {
	switch method {
	case "prodigy":
		return "α_k·d_k: Prodigy's step"
	case "dadapt-sgd":
		return "α_k·d_k/‖g_0‖: D-Adaptation's step"
	case "dog":
		return "α_k·η_t: DoG's step"
	case "schedule-free-adamw":
		return "γ_t: Schedule-Free's step" // with the paper's bias correction in γ_t
	}
	return "the method's own step"
}

// addProbe marks the rate probe (salsa-budget with probe=1) on the
// learning-rate figure: its start, at the rate its first window tests, and
// at each window's last step the rate the window tested, kept (its mean
// loss was not significantly above the last accepted window's) or failed
// (a rejected window, or two outliers in a row). A kept window whose last
// step was an outlier, after which the rollback's copy of the parameters
// was not renewed, has a mark of its own, and so does the step after a
// kept window whose loss, at the candidate copy, was an outlier, so that
// the candidate was not kept, and so does a window rejected on its mean
// whose rate was tried for one more window (probe_retry), and so do two
// outliers in a row that the validation loss overruled (probe_val), and so
// do the cap's end of the probe at the rate it did not run (probe_norm_cap),
// its check's rollback (probe_cap_confirm) and each halving by the decay's
// guard (decay_guard), at the rate after it. It returns the rates marked.
func (f *fig) addProbe(r *run) []float64 {
	marks := []struct {
		name  string
		glyph draw.GlyphStyle
	}{
		markStart:     {"probe start: first rate tested", draw.GlyphStyle{Color: color.Gray{Y: 60}, Radius: 4, Shape: draw.RingGlyph{}}},
		markKept:      {"probe window (%d): rate kept", draw.GlyphStyle{Color: color.RGBA{G: 140, A: 255}, Radius: 3, Shape: draw.CircleGlyph{}}},
		markNoCopy:    {"probe window (%d): rate kept, outlier last: no copy", draw.GlyphStyle{Color: color.RGBA{R: 230, G: 140, A: 255}, Radius: 4, Shape: draw.RingGlyph{}}},
		markCandidate: {"probe (%d): outlier at the window's copy: not kept", draw.GlyphStyle{Color: color.RGBA{R: 230, G: 140, A: 255}, Radius: 4, Shape: draw.BoxGlyph{}}},
		markRetry:     {"probe window (%d): rejected, rate tried again", draw.GlyphStyle{Color: color.RGBA{R: 210, A: 255}, Radius: 4, Shape: draw.RingGlyph{}}},
		markOverruled: {"probe (%d): two outliers, overruled by the validation loss", draw.GlyphStyle{Color: color.RGBA{B: 200, A: 255}, Radius: 4, Shape: draw.TriangleGlyph{}}},
		markFailed:    {"probe window (%d): rate failed", draw.GlyphStyle{Color: color.RGBA{R: 210, A: 255}, Radius: 4.5, Shape: draw.CrossGlyph{}}},
		markCap:       {"norm cap (%d): next rate not run", draw.GlyphStyle{Color: color.RGBA{R: 130, B: 180, A: 255}, Radius: 4.5, Shape: draw.CrossGlyph{}}},
		markCapCheck:  {"outlier after the cap (%d): copy put back", draw.GlyphStyle{Color: color.RGBA{R: 130, B: 180, A: 255}, Radius: 4, Shape: draw.BoxGlyph{}}},
		markGuard:     {"decay guard (%d): rest of the decay halved", draw.GlyphStyle{Color: color.RGBA{R: 230, G: 120, A: 255}, Radius: 4.5, Shape: draw.PyramidGlyph{}}},
	}
	xs, ys := make([][]float64, len(marks)), make([][]float64, len(marks))
	for _, e := range r.events {
		if e.Kind == schedule.KindProbe {
			m := probeMark(e)
			xs[m], ys[m] = append(xs[m], float64(e.Step)), append(ys[m], e.NewLR)
		}
	}
	for i, m := range marks {
		if pts := series(xs[i], ys[i], true); len(pts) > 0 {
			name := m.name
			if strings.Contains(name, "%d") {
				name = fmt.Sprintf(name, len(pts))
			}
			f.scatter(name, pts, m.glyph)
		}
	}
	return slices.Concat(ys...)
}

// The marks of addProbe, in the order they are drawn.
const (
	markStart = iota
	markKept
	markNoCopy
	markCandidate
	markRetry
	markOverruled
	markFailed
	markCap
	markCapCheck
	markGuard
)

// probeMark is the mark of addProbe that a KindProbe event gets.
func probeMark(e schedule.Event) int {
	switch e.Reason {
	case schedule.ReasonNormCap:
		return markCap
	case schedule.ReasonCapOutlier:
		return markCapCheck
	case schedule.ReasonDecayGuard:
		return markGuard
	case "start":
		return markStart
	case schedule.ReasonEndsOnOutlier:
		if e.Accept {
			return markNoCopy
		}
	case schedule.ReasonCandidateOutlier:
		return markCandidate
	case schedule.ReasonRetry:
		return markRetry
	case schedule.ReasonOverruled:
		return markOverruled
	}
	if e.Accept {
		return markKept
	}
	return markFailed
}

// lossPlot is the mini-batch loss per step, its moving average and the
// per-epoch train, test and validation losses; nil if there is none.
func lossPlot(r *run) *fig {
	f := newFig(r.title("Loss"), stepLabel(r), "loss")
	var all []float64 // every value drawn
	if n := len(r.rows); n > 0 {
		xs, ys := make([]float64, n), make([]float64, n)
		for i, row := range r.rows {
			xs[i], ys[i] = float64(row.Step), row.Loss
		}
		// Under 100 steps the moving average would be over one step, the
		// loss itself: the loss is drawn alone, in the average's style.
		w, avg := n/50, lineStyle(plotutil.Color(0), 1.5, nil)
		if w > 1 {
			f.line("mini-batch loss f_ξk(x_k)", series(xs, ys, false), lineStyle(color.Gray{Y: 190}, 0.5, nil))
			f.line(fmt.Sprintf("moving average (%d steps)", w), series(xs, movingAverage(ys, w), false), avg)
		} else {
			f.line("mini-batch loss f_ξk(x_k)", series(xs, ys, false), avg)
		}
		all = append(all, ys...)
	}
	for i, s := range []struct {
		name string
		col  func(epochRow) float64
	}{
		{"train loss (epoch)", func(e epochRow) float64 { return e.TrainLoss }},
		{"test loss (epoch)", func(e epochRow) float64 { return e.TestLoss }},
		{"validation loss (epoch)", func(e epochRow) float64 { return e.ValLoss }},
	} {
		var ex, ys []float64
		for _, e := range r.epochs {
			ex, ys = append(ex, float64(e.Steps)), append(ys, s.col(e))
		}
		if pts := series(ex, ys, false); len(pts) > 0 {
			g := draw.GlyphStyle{Color: plotutil.Color(i + 1), Radius: 2.5, Shape: plotutil.Shape(i + 5)}
			if len(pts) > 60 { // markers would merge into a band
				g.Radius = 0
			}
			f.linePoints(s.name, pts, lineStyle(plotutil.Color(i+1), 1.5, plotutil.Dashes(i)), g)
			all = append(all, ys...)
		}
	}
	// the validation losses the rate probe asked for (probe_val): at its
	// start, at the end of each window it kept, and at two outliers in a row
	if slices.ContainsFunc(r.events, func(e schedule.Event) bool { return e.Kind == schedule.KindProbe }) {
		var vx, vy []float64
		for _, e := range r.events {
			if e.Kind == schedule.KindValidation {
				vx, vy = append(vx, float64(e.Step)), append(vy, e.ValLoss)
			}
		}
		if pts := series(vx, vy, true); len(pts) > 0 {
			f.scatter("validation loss the probe asked for", pts, draw.GlyphStyle{Color: color.RGBA{B: 200, A: 255}, Radius: 3, Shape: draw.TriangleGlyph{}})
			all = append(all, vy...)
		}
	}
	if len(all) == 0 {
		return nil
	}
	f.addMarks(r, false, true)
	f.logY(all)
	if f.Y.Scale == (plot.LogScale{}) {
		f.Y.Label.Text = "loss (log scale)"
	}
	return f
}

// accPlot is the test accuracy per epoch, or nil if there is none.
func accPlot(r *run) *fig {
	xs, acc := r.column(func(e epochRow) float64 { return e.TestAcc })
	pts := series(xs, acc, false)
	if len(pts) == 0 {
		return nil
	}
	f := newFig(r.title("Test accuracy"), "epoch", "test accuracy (fraction)")
	f.epochLine(pts)
	var ys []float64
	for _, q := range pts {
		ys = append(ys, q.Y)
	}
	f.padY(ys)
	f.Y.Min, f.Y.Max = math.Max(f.Y.Min, 0), math.Min(f.Y.Max, 1)
	return f
}

// pplPlot is the test perplexity per epoch, on a log axis.
func pplPlot(r *run) *fig {
	xs, ppl := r.column(func(e epochRow) float64 { return e.TestPPL })
	f := newFig(r.title("Test perplexity"), "epoch", "test perplexity (log scale)")
	f.epochLine(series(xs, ppl, true))
	f.logY(ppl)
	return f
}

// epochLine draws a per-epoch series as a line with a dot at each epoch.
func (f *fig) epochLine(pts plotter.XYs) {
	f.linePoints("", pts, lineStyle(plotutil.Color(0), 1.5, nil),
		draw.GlyphStyle{Color: plotutil.Color(0), Radius: 2.5, Shape: draw.CircleGlyph{}})
}

// statsPlots builds the three rows of the statistics figure: (a) Δ_k per
// step, (b) the window mean and its (1−δ) interval at each test (eq.
// (15)), (c) σ̂_N of the window by the i.i.d., BM (eq. (22))
// and OLBM (eq. (23)) estimators.
func statsPlots(r *run) (string, [3]*fig, error) {
	var ps [3]*fig
	var tests []schedule.Event
	testAt, dropAt := map[int]bool{}, map[int]bool{}
	for _, e := range r.events {
		switch e.Kind {
		case schedule.KindTest, schedule.KindEquivalenceTest:
			tests = append(tests, e)
			testAt[e.Step] = true
		case schedule.KindDrop:
			dropAt[e.Step] = true
		}
	}
	title := fmt.Sprintf("%s (θ = %.4g)", r.title("SASA+ statistics"), r.theta)
	xs, ds := make([]float64, len(r.rows)), delta(r.rows)
	for i, row := range r.rows {
		xs[i] = float64(row.Step)
	}
	// The symmetric-log scale is linear within ±c: c is the narrowest
	// half-width of the tests, else a low quantile of |Δ_k|.
	var small []float64
	for _, e := range tests {
		if hw := (e.Upper - e.Lower) / 2; hw > 0 && !math.IsInf(hw, 0) {
			small = append(small, hw)
		}
	}
	if len(small) == 0 {
		for _, d := range ds {
			if a := math.Abs(d); a > 0 && !math.IsInf(a, 0) {
				small = append(small, a)
			}
		}
	}
	sort.Float64s(small)
	c := 1.0
	if len(small) > 0 {
		c = math.Pow(10, math.Floor(math.Log10(small[len(small)/20])))
	}
	sl := symlog{c}

	ps[0] = newFig("(a) Δ_k = <x_k+1, d_k> + (α_k/2)·||d_k||² at each step", "", "Δ_k (symlog)")
	ps[0].line("", series(xs, ds, false), lineStyle(plotutil.Color(0), 0.4, nil))
	ps[0].Legend.Add("Δ_k", rules{style: lineStyle(plotutil.Color(0), 1, nil)})

	ps[1] = newFig("(b) window mean of Δ and its confidence interval at each test", "", "mean, interval (symlog)")
	var ci ciPoints
	var stat plotter.XYs
	for _, e := range tests {
		if finite(e.Mean, e.Lower, e.Upper) {
			ci = append(ci, e)
			if e.Stationary {
				stat = append(stat, plotter.XY{X: float64(e.Step), Y: e.Mean})
			}
		}
	}
	var ciVals []float64
	if len(ci) > 0 {
		eb, err := plotter.NewYErrorBars(ci)
		if err != nil {
			return "", ps, fmt.Errorf("plots: stats: %w", err)
		}
		eb.LineStyle = lineStyle(plotutil.Color(0), 1, nil)
		eb.CapWidth = 3
		sc, _ := plotter.NewScatter(ci)
		sc.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(0), Radius: 1.5, Shape: draw.CircleGlyph{}}
		ps[1].Add(eb, sc)
		ps[1].Legend.Add("window mean and (1−δ) interval", rules{style: eb.LineStyle}, sc)
		for _, e := range ci {
			x := float64(e.Step)
			ps[1].data = append(ps[1].data, curve{pts: plotter.XYs{{X: x, Y: e.Lower}, {X: x, Y: e.Upper}}, joined: true})
			ciVals = append(ciVals, e.Lower, e.Mean, e.Upper)
		}
		ps[1].data = append(ps[1].data, curve{name: "window mean", pts: sc.XYs})
		if len(stat) > 0 {
			ps[1].scatter("stationary (the test's verdict)", stat,
				draw.GlyphStyle{Color: plotutil.Color(1), Radius: 3.5, Shape: draw.CircleGlyph{}})
		}
	}

	ps[2] = newFig("(c) σ̂_N of the same window by each estimator", stepLabel(r), "σ̂_N (log scale)")
	ts, err := rebuildWindows(r.rows, r.theta, testAt, dropAt)
	if err != nil {
		return "", ps, err
	}
	var sigmas []float64
	for j, m := range methods {
		var tx, ty []float64
		for _, t := range ts {
			tx, ty = append(tx, float64(t.step)), append(ty, t.std[j])
		}
		name := m.String()
		if m == r.variance {
			name += " (the run's)"
		}
		if pts := series(tx, ty, true); len(pts) > 0 {
			sty := lineStyle(plotutil.Color(j), 1.2, plotutil.Dashes(j))
			g := draw.GlyphStyle{Color: plotutil.Color(j), Radius: 2, Shape: plotutil.Shape(j)}
			for k, part := range splitAtGaps(pts) {
				if k > 0 {
					name = ""
				}
				ps[2].linePoints(name, part, sty, g)
			}
			sigmas = append(sigmas, ty...)
		}
	}
	// The rebuilt window must be the scheduler's: count it against the logs.
	logged := map[int]int{}
	for _, e := range tests {
		logged[e.Step] = e.Count
	}
	bad := 0
	for _, t := range ts {
		if t.count != logged[t.step] {
			bad++
		}
	}
	if bad > 0 {
		ps[2].Title.Text += fmt.Sprintf(" — WARNING: %d of %d windows differ in size from %s", bad, len(ts), EventsFile)
	}
	ps[2].logY(sigmas)

	for i, f := range ps {
		if i < 2 {
			f.Y.Scale, f.Y.Tick.Marker = sl, sl
			f.Add(rules{ys: []float64{0}, style: lineStyle(color.Black, 0.6, nil)})
			f.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
				t := linTicks{}.Ticks(lo, hi)
				for k := range t {
					t[k].Label = ""
				}
				return t
			})
		}
		f.X.Min, f.X.Max = 0, xs[len(xs)-1]
		f.Title.TextStyle.Font.Size = 11
		f.Legend.TextStyle.Font.Size = 10
		f.addMarks(r, true, i == 0)
	}
	ps[0].fitScaled(ds)
	ps[1].fitScaled(ciVals)
	if len(ts) == 0 { // empty panels: no ticks to suggest a scale
		ps[2].Title.Text = "(c) no test to evaluate σ̂_N at"
		ps[2].Y.Label.Text = "σ̂_N"
		for _, f := range ps[1:] {
			f.Y.Tick.Marker = plot.ConstantTicks{}
		}
	}
	return title, ps, nil
}

// splitAtGaps splits a series of tests where no test ran for much longer
// (over 2.5 times) than the usual interval between tests, the median one.
func splitAtGaps(pts plotter.XYs) []plotter.XYs {
	if len(pts) < 3 {
		return []plotter.XYs{pts}
	}
	gaps := make([]float64, len(pts)-1)
	for i := 1; i < len(pts); i++ {
		gaps[i-1] = pts[i].X - pts[i-1].X
	}
	sorted := append([]float64(nil), gaps...)
	sort.Float64s(sorted)
	limit := 2.5 * sorted[len(sorted)/2]
	var out []plotter.XYs
	start := 0
	for i, g := range gaps {
		if g > limit {
			out, start = append(out, pts[start:i+1]), i+1
		}
	}
	return append(out, pts[start:])
}

// ciPoints plots test events as means with their interval.
type ciPoints []schedule.Event

func (c ciPoints) Len() int                { return len(c) }
func (c ciPoints) XY(i int) (x, y float64) { return float64(c[i].Step), c[i].Mean }
func (c ciPoints) YError(i int) (float64, float64) {
	return c[i].Mean - c[i].Lower, c[i].Upper - c[i].Mean
}

// addMarks marks the switch with a dashed line, the start of salsa-budget's
// final decay with a dash-dotted one and, if withDrops, the drops with
// dotted ones; withLegend adds them to the legend.
func (f *fig) addMarks(r *run, withDrops, withLegend bool) {
	var sw rules
	sw.style = lineStyle(color.RGBA{R: 200, G: 0, B: 0, A: 255}, 1.2, []vg.Length{6, 3})
	drops := rules{style: lineStyle(color.Gray{Y: 140}, 0.6, []vg.Length{1.5, 2})}
	decay := rules{style: lineStyle(color.RGBA{R: 0, G: 90, B: 200, A: 255}, 1.2, []vg.Length{6, 2, 1.5, 2})}
	for _, e := range r.events {
		switch e.Kind {
		case schedule.KindDecay:
			decay.xs = append(decay.xs, float64(e.Step))
			if withLegend {
				decay.labels = append(decay.labels, decayLabel(e, r.cuts))
			}
		case schedule.KindSwitch:
			sw.xs = append(sw.xs, float64(e.Step))
			if withLegend {
				sw.labels = append(sw.labels, fmt.Sprintf("switch SSLS→SASA+: %s (step %d)", e.Reason, e.Step))
			}
		case schedule.KindDrop:
			drops.xs = append(drops.xs, float64(e.Step))
		}
	}
	if withDrops && len(drops.xs) > 0 {
		f.Add(drops)
		if withLegend {
			f.Legend.Add("drop", drops)
		}
	}
	f.addLabelledRules(sw, "switch", withLegend)
	f.addLabelledRules(decay, "decay", withLegend)
}

// averageLabel says where the run ended (salsa-probe's pick between the
// average of the decay's iterates and the last iterate) and the test's z.
func averageLabel(e schedule.Event) string {
	at := "the last iterate"
	if e.Accept {
		at = "the average of the decay"
	}
	return fmt.Sprintf("ends at %s (validation z = %.3g)", at, e.Z)
}

// decayLabel names salsa-budget's decay: its shape (the line to 0, or with
// cuts two cuts ×0.1), the step, the rate it starts from and why it began
// (the budget, the probe's end or a rollback).
func decayLabel(e schedule.Event, cuts bool) string {
	why := ""
	if e.Reason != "" {
		why = ", " + e.Reason
	}
	shape := "decay to 0"
	if cuts {
		shape = "decay in cuts ×0.1"
	}
	return fmt.Sprintf("%s from %.3g%s (step %d)", shape, e.NewLR, why, e.Step)
}

// addLabelledRules adds rules whose labels the figure places (f.labelled),
// with a legend entry if withLegend; nothing if there are none.
func (f *fig) addLabelledRules(r rules, name string, withLegend bool) {
	if len(r.xs) == 0 {
		return
	}
	f.Add(r)
	f.labelled = append(f.labelled, r)
	if withLegend {
		f.Legend.Add(name, r)
	}
}

// stepLabel names the x axis of per-run figures.
func stepLabel(r *run) string {
	if spe := r.stepsPerEpoch(); spe > 0 {
		return fmt.Sprintf("step k   (1 epoch = %.4g steps)", spe)
	}
	return "step k"
}

// series returns the finite points (positive ones if positive), sampled with
// a constant stride to at most maxPoints; the last point is always kept.
func series(xs, ys []float64, positive bool) plotter.XYs {
	var pts plotter.XYs
	for i := range xs {
		if finite(xs[i], ys[i]) && (!positive || ys[i] > 0) {
			pts = append(pts, plotter.XY{X: xs[i], Y: ys[i]})
		}
	}
	if n := len(pts); n > maxPoints {
		stride := (n + maxPoints - 1) / maxPoints
		var out plotter.XYs
		for i := 0; i < n; i += stride {
			out = append(out, pts[i])
		}
		if (n-1)%stride != 0 {
			out = append(out, pts[n-1])
		}
		pts = out
	}
	return pts
}

func finite(v ...float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// movingAverage is the trailing mean over w values; non-finite values are
// left out of the mean.
func movingAverage(ys []float64, w int) []float64 {
	out := make([]float64, len(ys))
	sum, n := 0.0, 0
	for i, y := range ys {
		if finite(y) {
			sum, n = sum+y, n+1
		}
		if j := i - w; j >= 0 && finite(ys[j]) {
			sum, n = sum-ys[j], n-1
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = sum / float64(n)
		}
	}
	return out
}

// save draws a figure as name.png and name.svg in out and lists the files.
func (d *Drawn) save(out, name string, w, h vg.Length, drawFig func(draw.Canvas)) error {
	files, err := save(out, name, w, h, drawFig)
	d.Files = append(d.Files, files...)
	return err
}

// A comparison's markers of drops and switches: a downward triangle and a
// diamond, outlined in black.
type triDown struct{}

func (triDown) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	polygon(c, sty, pt, []vg.Point{{X: -r, Y: r * 0.8}, {X: r, Y: r * 0.8}, {X: 0, Y: -r}})
}

type diamond struct{}

func (diamond) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	polygon(c, sty, pt, []vg.Point{{X: 0, Y: r}, {X: r * 0.8, Y: 0}, {X: 0, Y: -r}, {X: -r * 0.8, Y: 0}})
}

func polygon(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point, corners []vg.Point) {
	var p vg.Path
	for i, q := range corners {
		if i == 0 {
			p.Move(pt.Add(q))
		} else {
			p.Line(pt.Add(q))
		}
	}
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
	c.SetLineStyle(draw.LineStyle{Color: color.Black, Width: vg.Points(0.7)})
	c.Stroke(p)
}

// glyphThumb is a legend thumbnail of one glyph.
type glyphThumb struct{ sty draw.GlyphStyle }

func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.sty, c.Center()) }
