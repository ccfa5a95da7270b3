// Package plots draws the figures of a salsa training run from its run
// directory (steps.csv.gz, events.csv, epochs.csv, run.json), each as PNG and
// SVG: the learning rate, the loss, the test accuracy and the SASA+
// statistics panel in the manner of the paper's Figure
// fig:cifar_sasa_statistics, and the comparison of several runs in the manner
// of fig:salsa_cifar10_imagenet. The x axis of per-run figures is the
// optimizer step k; comparisons use epochs when every run has epochs.csv.
package plots

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/salsaopt/salsa/schedule"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Drawn lists the files written and the figures left out, with the reason.
type Drawn struct {
	Files   []string
	Skipped []string
}

// maxPoints bounds the points of a per-step line; longer series are sampled
// with a constant stride.
const maxPoints = 4000

// DrawRun draws lr, loss, acc and stats (.png and .svg) of the run in dir
// into dir.
func DrawRun(dir string) error {
	_, err := DrawRunTo(dir, dir)
	return err
}

// DrawCompare draws compare_lr, compare_loss and compare_acc of the runs in
// dirs into out.
func DrawCompare(dirs []string, out string) error {
	_, err := DrawCompareTo(dirs, out)
	return err
}

// DrawRunTo draws the figures of the run in dir into the directory out,
// created if needed. A figure whose data the run lacks is skipped and listed.
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
	one := func(name string, p *plot.Plot, why string) error {
		if p == nil {
			d.Skipped = append(d.Skipped, name+": "+why)
			return nil
		}
		files, err := save(out, name, 9*vg.Inch, 5.5*vg.Inch, func(c draw.Canvas) { drawPlot(p, c) })
		d.Files = append(d.Files, files...)
		return err
	}
	if err := one("lr", lrPlot(r), ""); err != nil {
		return d, err
	}
	if err := one("loss", lossPlot(r), ""); err != nil {
		return d, err
	}
	if err := one("acc", accPlot(r), "no test_acc in "+EpochsFile); err != nil {
		return d, err
	}
	if r.hasPPL() {
		if err := one("ppl", pplPlot(r), ""); err != nil {
			return d, err
		}
	}
	if len(r.rows) == 0 {
		d.Skipped = append(d.Skipped, "stats: no "+StepsFile)
		return d, nil
	}
	title, panels, err := statsPlots(r)
	if err != nil {
		return d, err
	}
	files, err := save(out, "stats", 9*vg.Inch, 10*vg.Inch, func(c draw.Canvas) {
		sty := textStyle(13)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y - 4}, title)
		c = draw.Crop(c, 0, 0, 0, -sty.Rectangle(title).Size().Y-8)
		tiles := draw.Tiles{Rows: 3, Cols: 1, PadY: 6, PadTop: 2, PadBottom: 2, PadLeft: 4, PadRight: 8}
		cs := plot.Align([][]*plot.Plot{{panels[0]}, {panels[1]}, {panels[2]}}, tiles, c)
		for i, p := range panels {
			drawPlot(p, cs[i][0])
		}
	})
	d.Files = append(d.Files, files...)
	return d, err
}

// DrawCompareTo draws the comparison of the runs in dirs into out, one line
// per run labelled by run.json's label, its method or the directory's name.
func DrawCompareTo(dirs []string, out string) (Drawn, error) {
	var d Drawn
	if len(dirs) == 0 {
		return d, fmt.Errorf("plots: no run directories to compare")
	}
	runs := make([]*run, len(dirs))
	count := map[string]int{}
	for i, dir := range dirs {
		r, err := loadRun(dir)
		if err != nil {
			return d, err
		}
		runs[i] = r
		count[r.legend()]++
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return d, fmt.Errorf("plots: output directory: %w", err)
	}
	byEpoch := true
	for _, r := range runs {
		byEpoch = byEpoch && r.stepsPerEpoch() > 0
	}
	xlabel := "epoch"
	if !byEpoch {
		xlabel = "step (some runs have no " + EpochsFile + ")"
	}
	figs := map[string]*plot.Plot{
		"compare_lr":   newPlot("Learning rate", xlabel, "learning rate (log scale)"),
		"compare_loss": newPlot("Training loss per epoch", "epoch", "training loss"),
		"compare_acc":  newPlot("Test accuracy", "epoch", "test accuracy (fraction)"),
		"compare_ppl":  newPlot("Test perplexity", "epoch", "test perplexity (log scale)"),
	}
	figs["compare_acc"].Legend.Top, figs["compare_acc"].Legend.YOffs = false, 6
	var lrVals, lossVals, pplVals []float64
	lines := map[string]int{}
	add := func(fig, name string, pts plotter.XYs, sty draw.LineStyle) bool {
		ok := addLine(figs[fig], name, pts, sty)
		if ok {
			lines[fig]++
		}
		return ok
	}
	for i, r := range runs {
		name := r.legend()
		if count[name] > 1 {
			name += " (" + r.name + ")"
		}
		sty := lineStyle(plotutil.Color(i), 1.5, plotutil.Dashes(i/7))
		var xs, ys []float64
		if len(r.rows) > 0 {
			scale := 1.0
			if byEpoch {
				scale = 1 / r.stepsPerEpoch()
			}
			for _, row := range r.rows {
				xs, ys = append(xs, float64(row.Step)*scale), append(ys, row.LR)
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
		lrVals = append(lrVals, ys...)
		if !add("compare_lr", name, series(xs, ys, true), sty) {
			d.Skipped = append(d.Skipped, "compare_lr: no learning rate in "+r.dir)
		}
		var ex, loss, acc []float64
		for _, e := range r.epochs {
			ex, loss, acc = append(ex, float64(e.Epoch)), append(loss, e.TrainLoss), append(acc, e.TestAcc)
		}
		lossVals = append(lossVals, loss...)
		if !add("compare_loss", name, series(ex, loss, false), sty) {
			d.Skipped = append(d.Skipped, "compare_loss: no train_loss in "+r.dir)
		}
		if !add("compare_acc", name, series(ex, acc, false), sty) {
			d.Skipped = append(d.Skipped, "compare_acc: no test_acc in "+r.dir)
		}
		if r.hasPPL() {
			var px, ppl []float64
			for _, e := range r.epochs {
				px, ppl = append(px, float64(e.Epoch)), append(ppl, e.TestPPL)
			}
			pplVals = append(pplVals, ppl...)
			add("compare_ppl", name, series(px, ppl, true), sty)
		}
	}
	logY(figs["compare_ppl"], pplVals)
	logY(figs["compare_lr"], lrVals)
	logY(figs["compare_loss"], lossVals)
	padY(figs["compare_acc"])
	for _, name := range []string{"compare_lr", "compare_loss", "compare_acc", "compare_ppl"} {
		p := figs[name]
		if name == "compare_ppl" && lines[name] == 0 {
			continue // no language model among the runs
		}
		if lines[name] == 0 {
			d.Skipped = append(d.Skipped, name+": no data in any run")
			continue
		}
		files, err := save(out, name, 9*vg.Inch, 5.5*vg.Inch, func(c draw.Canvas) { drawPlot(p, c) })
		d.Files = append(d.Files, files...)
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

// lrPlot is α_k per step on a log scale, with the switch and the drops.
func lrPlot(r *run) *plot.Plot {
	p := newPlot("Learning rate — "+r.legend(), stepLabel(r), "learning rate α_k (log scale)")
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
	addLine(p, "α_k", series(xs, ys, true), lineStyle(plotutil.Color(0), 1.5, nil))
	var dx, dy []float64
	for _, e := range r.events {
		if e.Kind == schedule.KindDrop {
			dx, dy = append(dx, float64(e.Step)), append(dy, e.NewLR)
		}
	}
	if pts := series(dx, dy, true); len(pts) > 0 {
		s, _ := plotter.NewScatter(pts)
		s.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(1), Radius: 3.5, Shape: draw.PyramidGlyph{}}
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("drop (%d): new α", len(pts)), s)
		ys = append(ys, dy...)
	}
	addMarks(p, r, false, true)
	logY(p, ys)
	return p
}

// lossPlot is the mini-batch loss per step, its moving average and the
// per-epoch train and test losses.
func lossPlot(r *run) *plot.Plot {
	p := newPlot("Loss — "+r.legend(), stepLabel(r), "loss")
	var all []float64 // every value drawn
	if n := len(r.rows); n > 0 {
		xs, ys := make([]float64, n), make([]float64, n)
		for i, row := range r.rows {
			xs[i], ys[i] = float64(row.Step), row.Loss
		}
		w := max(1, n/50)
		addLine(p, "mini-batch loss f_ξk(x_k)", series(xs, ys, false), lineStyle(color.Gray{Y: 190}, 0.5, nil))
		addLine(p, fmt.Sprintf("moving average (%d steps)", w), series(xs, movingAverage(ys, w), false),
			lineStyle(plotutil.Color(0), 1.5, nil))
		all = append(all, ys...)
	}
	var ex, train, test []float64
	for _, e := range r.epochs {
		ex, train, test = append(ex, float64(e.Steps)), append(train, e.TrainLoss), append(test, e.TestLoss)
	}
	for i, s := range []struct {
		name string
		ys   []float64
	}{{"train loss (epoch)", train}, {"test loss (epoch)", test}} {
		if pts := series(ex, s.ys, false); len(pts) > 0 {
			l, sc, _ := plotter.NewLinePoints(pts)
			l.LineStyle = lineStyle(plotutil.Color(i+1), 1.5, nil)
			sc.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(i + 1), Radius: 2.5, Shape: draw.CircleGlyph{}}
			if len(pts) > 60 { // markers would merge into a band
				sc.GlyphStyle.Radius = 0
			}
			p.Add(l, sc)
			p.Legend.Add(s.name, l, sc)
			all = append(all, s.ys...)
		}
	}
	if len(all) == 0 {
		return nil
	}
	addMarks(p, r, false, true)
	logY(p, all)
	return p
}

// accPlot is the test accuracy per epoch, or nil if there is none.
func accPlot(r *run) *plot.Plot {
	var ex, acc []float64
	for _, e := range r.epochs {
		ex, acc = append(ex, float64(e.Epoch)), append(acc, e.TestAcc)
	}
	pts := series(ex, acc, false)
	if len(pts) == 0 {
		return nil
	}
	p := newPlot("Test accuracy — "+r.legend(), "epoch", "test accuracy (fraction)")
	addEpochLine(p, pts)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		lo, hi = math.Min(lo, q.Y), math.Max(hi, q.Y)
	}
	pad := math.Max(0.01, 0.05*(hi-lo))
	p.Y.Min, p.Y.Max = math.Max(0, lo-pad), math.Min(1, hi+pad)
	return p
}

// hasPPL reports whether the run logged a test perplexity (a language model).
func (r *run) hasPPL() bool {
	for _, e := range r.epochs {
		if !math.IsNaN(e.TestPPL) {
			return true
		}
	}
	return false
}

// pplPlot is the test perplexity per epoch, on a log axis.
func pplPlot(r *run) *plot.Plot {
	var ex, ppl []float64
	for _, e := range r.epochs {
		ex, ppl = append(ex, float64(e.Epoch)), append(ppl, e.TestPPL)
	}
	pts := series(ex, ppl, true)
	p := newPlot("Test perplexity — "+r.legend(), "epoch", "test perplexity (log scale)")
	addEpochLine(p, pts)
	logY(p, ppl)
	return p
}

// addEpochLine draws a per-epoch series as a line with a dot at each epoch.
func addEpochLine(p *plot.Plot, pts plotter.XYs) {
	l, sc, _ := plotter.NewLinePoints(pts)
	l.LineStyle = lineStyle(plotutil.Color(0), 1.5, nil)
	sc.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(0), Radius: 2.5, Shape: draw.CircleGlyph{}}
	p.Add(l, sc)
}

// statsPlots builds the three rows of the statistics figure: (a) Δ_k per
// step, (b) the window mean and its (1−δ) interval at each test (eq.
// (15)), (c) σ̂_N of the window by the i.i.d., BM (eq. (22))
// and OLBM (eq. (23)) estimators.
func statsPlots(r *run) (string, [3]*plot.Plot, error) {
	var ps [3]*plot.Plot
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
	title := fmt.Sprintf("SASA+ statistics — %s (θ = %.4g)", r.legend(), r.theta)
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

	ps[0] = newPlot("(a) Δ_k = <x_k+1, d_k> + (α_k/2)·||d_k||² at each step", "", "Δ_k (symlog)")
	addLine(ps[0], "", series(xs, ds, false), lineStyle(plotutil.Color(0), 0.4, nil))
	ps[0].Legend.Add("Δ_k", rules{style: lineStyle(plotutil.Color(0), 1, nil)})

	ps[1] = newPlot("(b) window mean of Δ and its confidence interval at each test", "", "mean, interval (symlog)")
	if len(tests) == 0 {
		ps[1].Title.Text = "(b) no stationarity test in " + EventsFile
	}
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
		if len(stat) > 0 {
			s, _ := plotter.NewScatter(stat)
			s.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(1), Radius: 3.5, Shape: draw.CircleGlyph{}}
			ps[1].Add(s)
			ps[1].Legend.Add("stationary (the test's verdict)", s)
		}
	}

	ps[2] = newPlot("(c) σ̂_N of the same window by each estimator", stepLabel(r), "σ̂_N (log scale)")
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
			l, sc, _ := plotter.NewLinePoints(pts)
			l.LineStyle = lineStyle(plotutil.Color(j), 1.2, plotutil.Dashes(j))
			sc.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(j), Radius: 2, Shape: plotutil.Shape(j)}
			ps[2].Add(l, sc)
			ps[2].Legend.Add(name, l, sc)
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
	logY(ps[2], sigmas)

	for i, p := range ps {
		if i < 2 {
			p.Y.Scale, p.Y.Tick.Marker = sl, sl
			p.Add(rules{ys: []float64{0}, style: lineStyle(color.Black, 0.6, nil)})
			p.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
				t := linTicks{}.Ticks(lo, hi)
				for k := range t {
					t[k].Label = ""
				}
				return t
			})
		}
		p.X.Min, p.X.Max = 0, xs[len(xs)-1]
		p.Title.TextStyle.Font.Size = 11
		p.Legend.TextStyle.Font.Size = 10
		addMarks(p, r, true, i == 0)
	}
	if len(ts) == 0 { // empty panels: no ticks to suggest a scale
		ps[2].Title.Text = "(c) no test to evaluate σ̂_N at"
		ps[2].Y.Label.Text = "σ̂_N"
		for _, p := range ps[1:] {
			p.Y.Tick.Marker = plot.ConstantTicks{}
		}
	}
	return title, ps, nil
}

// ciPoints plots test events as means with their interval.
type ciPoints []schedule.Event

func (c ciPoints) Len() int                { return len(c) }
func (c ciPoints) XY(i int) (x, y float64) { return float64(c[i].Step), c[i].Mean }
func (c ciPoints) YError(i int) (float64, float64) {
	return c[i].Mean - c[i].Lower, c[i].Upper - c[i].Mean
}

// addMarks marks the switch with a dashed line and, if withDrops, the drops
// with dotted ones; withLegend adds them to the legend.
func addMarks(p *plot.Plot, r *run, withDrops, withLegend bool) {
	var sw rules
	sw.style = lineStyle(color.RGBA{R: 200, G: 0, B: 0, A: 255}, 1.2, []vg.Length{6, 3})
	drops := rules{style: lineStyle(color.Gray{Y: 140}, 0.6, []vg.Length{1.5, 2})}
	for _, e := range r.events {
		switch e.Kind {
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
		p.Add(drops)
		if withLegend {
			p.Legend.Add("drop", drops)
		}
	}
	if len(sw.xs) > 0 {
		p.Add(sw)
		if withLegend {
			p.Legend.Add("switch", sw)
		}
	}
}

// stepLabel names the x axis of per-run figures.
func stepLabel(r *run) string {
	if spe := r.stepsPerEpoch(); spe > 0 {
		return fmt.Sprintf("step k   (1 epoch = %.4g steps)", spe)
	}
	return "step k"
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Title.TextStyle.Font.Size = 14
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = 11
	p.Legend.XOffs, p.Legend.YOffs = -6, -6
	p.X.Tick.Marker = linTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// drawPlot draws p on c with its y label centred on the data area (gonum/plot
// centres it on the mean of the axis range, which is off the axis on a log
// scale and shrinks the plot) and its legend inside the data area on a
// translucent white box.
func drawPlot(p *plot.Plot, c draw.Canvas) {
	label, leg := p.Y.Label.Text, p.Legend
	defer func() { p.Y.Label.Text, p.Legend = label, leg }()
	p.Y.Label.Text, p.Legend = "", plot.NewLegend()
	sty := p.Y.Label.TextStyle
	h := sty.Rectangle("Mg").Size().Y // the same for every label, to keep Align's alignment
	inner := draw.Crop(c, h+6, -10, 2, -4)
	p.Draw(inner)
	dc := p.DataCanvas(inner)
	sty.Rotation, sty.XAlign, sty.YAlign = math.Pi/2, draw.XCenter, draw.YTop
	c.FillText(sty, vg.Point{X: c.Min.X, Y: dc.Center().Y}, label)
	// Legend.Rectangle has the sides swapped: take its size only.
	r := leg.Rectangle(dc)
	w, ht := r.Max.X-r.Min.X, r.Max.Y-r.Min.Y
	if w <= 0 {
		return
	}
	x0, y0 := dc.Max.X+leg.XOffs-w-4, dc.Max.Y+leg.YOffs-ht-4
	if leg.Left {
		x0 = dc.Min.X + leg.XOffs - 4
	}
	if !leg.Top {
		y0 = dc.Min.Y + leg.YOffs - 4
	}
	box := vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x0 + w + 8, Y: y0 + ht + 8}}
	c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 210})
	c.Fill(box.Path())
	leg.Draw(dc)
}

// linTicks labels about six round values of a linear axis.
type linTicks struct{}

func (linTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: fmtTick(lo)}}
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/6)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if (hi-lo)/(m*step) <= 7 {
			step *= m
			break
		}
	}
	var ts []plot.Tick
	for k := math.Ceil(lo / step); k*step <= hi+step*1e-9; k++ {
		v := k * step
		ts = append(ts, plot.Tick{Value: v, Label: fmtTick(v)})
		if w := v + step/2; w <= hi {
			ts = append(ts, plot.Tick{Value: w})
		}
	}
	return ts
}

func lineStyle(c color.Color, w vg.Length, dashes []vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(float64(w)), Dashes: dashes}
}

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
}

// addLine adds a line with a legend entry (none if name is empty). Long
// lines are drawn in pieces: freetype's rasterizer is quadratic in the
// length of one path.
func addLine(p *plot.Plot, name string, pts plotter.XYs, sty draw.LineStyle) bool {
	if len(pts) == 0 {
		return false
	}
	for i := 0; i < len(pts)-1 || i == 0; i += 200 {
		l, _ := plotter.NewLine(pts[i:min(i+201, len(pts))])
		l.LineStyle = sty
		p.Add(l)
		if i == 0 && name != "" {
			p.Legend.Add(name, l)
		}
	}
	return true
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

// logY puts p's y axis on a log scale spanning the positive values in ys if
// every finite one is positive; otherwise it leaves the axis linear, with a
// margin.
func logY(p *plot.Plot, ys []float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, y := range ys {
		if !finite(y) {
			continue
		}
		if y <= 0 {
			padY(p)
			return
		}
		lo, hi = math.Min(lo, y), math.Max(hi, y)
	}
	if lo > hi {
		return
	}
	if lo == hi {
		lo, hi = lo/2, hi*2
	}
	f := math.Pow(hi/lo, 0.04)
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	p.Y.Min, p.Y.Max = lo/f, hi*f
}

// padY widens a linear y axis by 3% on each side.
func padY(p *plot.Plot) {
	m := 0.03 * (p.Y.Max - p.Y.Min)
	p.Y.Min, p.Y.Max = p.Y.Min-m, p.Y.Max+m
}

// logTicks labels the decades of a log axis (every few if there are many,
// with 2 and 5 if there are few).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	every := max(1, (e1-e0+7)/8)
	var ts []plot.Tick
	for e := e0; e <= e1; e++ {
		for m := 1; m < 10; m++ {
			v := float64(m) * math.Pow(10, float64(e))
			t := plot.Tick{Value: v}
			if m == 1 && (e-e0)%every == 0 || e1-e0 <= 2 && (m == 2 || m == 5) {
				t.Label = fmtTick(v)
			}
			if m == 1 || e1-e0 <= 10 {
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// symlog is a symmetric log scale, asinh(y/c): linear within ±c,
// logarithmic beyond, so that windows of Δ before and after drops of several
// orders of magnitude are all visible.
type symlog struct{ c float64 }

func (s symlog) Normalize(lo, hi, y float64) float64 {
	f := func(v float64) float64 { return math.Asinh(v / s.c) }
	return (f(y) - f(lo)) / (f(hi) - f(lo))
}

func (s symlog) Ticks(lo, hi float64) []plot.Tick {
	ts := []plot.Tick{{Value: 0, Label: "0"}}
	top := math.Max(math.Abs(lo), math.Abs(hi))
	e0, e1 := int(math.Ceil(math.Log10(s.c))), int(math.Ceil(math.Log10(top)))
	every := max(1, (e1-e0+3)/4)
	for e := e0; e <= e1; e++ {
		v := math.Pow(10, float64(e))
		for _, x := range []float64{v, -v} {
			t := plot.Tick{Value: x}
			if (e1-e)%every == 0 {
				t.Label = fmtTick(x)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// fmtTick writes 0.01 ≤ |v| < 10⁶ plainly and other values as 1e-05 → "1e-5".
func fmtTick(v float64) string {
	if a := math.Abs(v); a == 0 || a >= 0.01 && a < 1e6 {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	e := math.Floor(math.Log10(math.Abs(v)))
	m := v / math.Pow(10, e)
	if math.Abs(m-math.Round(m)) < 1e-9 {
		m = math.Round(m)
	}
	return strconv.FormatFloat(m, 'g', 3, 64) + "e" + strconv.Itoa(int(e))
}

// rules draws full-height vertical lines at xs (with labels at the top) and
// full-width horizontal lines at ys, without changing the data range.
type rules struct {
	xs, ys []float64
	labels []string
	style  draw.LineStyle
}

func (r rules) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := textStyle(10)
	sty.Color = r.style.Color
	for i, x := range r.xs {
		X := tx(x)
		if X < c.Min.X || X > c.Max.X {
			continue
		}
		c.StrokeLine2(r.style, X, c.Min.Y, X, c.Max.Y)
		if i < len(r.labels) {
			pt := vg.Point{X: X + 3, Y: c.Max.Y - sty.Rectangle("M").Size().Y - 2}
			box := sty.Rectangle(r.labels[i]).Add(pt)
			c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 210})
			c.Fill(box.Path())
			c.FillText(sty, pt, r.labels[i])
		}
	}
	for _, y := range r.ys {
		if Y := ty(y); Y >= c.Min.Y && Y <= c.Max.Y {
			c.StrokeLine2(r.style, c.Min.X, Y, c.Max.X, Y)
		}
	}
}

func (r rules) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(r.style, c.Min.X, y, c.Max.X, y)
}

// save draws the figure as name.png and name.svg in out.
func save(out, name string, w, h vg.Length, drawFig func(draw.Canvas)) (files []string, err error) {
	defer func() {
		if e := recover(); e != nil { // gonum/plot panics on some degenerate axes
			err = fmt.Errorf("plots: drawing %s: %v", name, e)
		}
	}()
	for _, ext := range []string{"png", "svg"} {
		var c vg.CanvasWriterTo = vgsvg.New(w, h)
		if ext == "png" {
			c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120))}
		}
		dc := draw.New(c)
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		drawFig(dc)
		path := filepath.Join(out, name+"."+ext)
		f, err := os.Create(path)
		if err != nil {
			return files, fmt.Errorf("plots: %w", err)
		}
		_, err = c.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return files, fmt.Errorf("plots: writing %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}
