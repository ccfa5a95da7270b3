package plots

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// fig is a plot and the data drawn on it, which its legend must not cover.
type fig struct {
	*plot.Plot
	data     []curve // in data coordinates
	labelled []rules // rules with labels at the top of the data area

	fitted bool // fitLegend has run

	// Where the last draw put the data area and the legend (empty if
	// none), for the tests to check.
	dataArea  draw.Canvas
	legendBox vg.Rectangle
}

// curve is data drawn on a fig: a polyline if joined, else points.
type curve struct {
	name   string
	pts    plotter.XYs
	joined bool
}

func newFig(title, x, y string) *fig {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Title.TextStyle.Font.Size = 14
	p.Legend.TextStyle.Font.Size = 11
	p.Legend.ThumbnailWidth = vg.Points(30) // room for a dash pattern
	p.X.Tick.Marker = linTicks{}
	p.Add(plotter.NewGrid())
	return &fig{Plot: p}
}

// line adds a line with a legend entry (none if name is empty); it is false
// if there are no points. Long lines are drawn in pieces: freetype's
// rasterizer is quadratic in the length of one path.
func (f *fig) line(name string, pts plotter.XYs, sty draw.LineStyle) bool {
	if len(pts) == 0 {
		return false
	}
	for i := 0; i < len(pts)-1 || i == 0; i += 200 {
		l, _ := plotter.NewLine(pts[i:min(i+201, len(pts))])
		l.LineStyle = sty
		f.Add(l)
		if i == 0 && name != "" {
			f.Legend.Add(name, l)
		}
	}
	f.data = append(f.data, curve{name: name, pts: pts, joined: true})
	return true
}

// scatter adds points with a legend entry (none if name is empty).
func (f *fig) scatter(name string, pts plotter.XYs, g draw.GlyphStyle) {
	s, _ := plotter.NewScatter(pts)
	s.GlyphStyle = g
	f.Add(s)
	if name != "" {
		f.Legend.Add(name, s)
	}
	f.data = append(f.data, curve{name: name, pts: pts})
}

// linePoints adds a line with a marker at each point (none if g.Radius is
// 0) and one legend entry for both (none if name is empty).
func (f *fig) linePoints(name string, pts plotter.XYs, sty draw.LineStyle, g draw.GlyphStyle) {
	if !f.line("", pts, sty) {
		return
	}
	f.data[len(f.data)-1].name = name
	l, _ := plotter.NewLine(pts[:1])
	l.LineStyle = sty
	thumbs := []plot.Thumbnailer{l}
	if g.Radius > 0 {
		s, _ := plotter.NewScatter(pts)
		s.GlyphStyle = g
		f.Add(s)
		thumbs = append(thumbs, s)
	}
	if name != "" {
		f.Legend.Add(name, thumbs...)
	}
}

// The margin around the data, as a fraction of the axis in its scale.
const yMargin = 0.06

// logY puts the y axis on a log scale spanning ys with a margin if every
// finite value is positive; otherwise it fits a linear axis to them. With
// no finite value it leaves the axis alone.
func (f *fig) logY(ys []float64) {
	some := false
	for _, y := range ys {
		if finite(y) && y <= 0 {
			f.padY(ys)
			return
		}
		some = some || finite(y)
	}
	if some {
		f.Y.Scale, f.Y.Tick.Marker = plot.LogScale{}, logTicks{}
		f.fitScaled(ys)
	}
}

// padY fits a linear y axis to ys, with a margin.
func (f *fig) padY(ys []float64) {
	f.Y.Scale, f.Y.Tick.Marker = plot.LinearScale{}, linTicks{}
	f.fitScaled(ys)
}

// fitScaled fits the y axis to the finite values of ys, with a margin of
// yMargin of the range on each side in the axis's scale; it leaves the axis
// alone if there are none.
func (f *fig) fitScaled(ys []float64) {
	fwd, inv := scaleFuncs(f.Y.Scale)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, y := range ys {
		if u := fwd(y); finite(u) {
			lo, hi = math.Min(lo, u), math.Max(hi, u)
		}
	}
	if lo > hi {
		return
	}
	m := yMargin * (hi - lo)
	if m == 0 {
		m = math.Max(0.1*math.Abs(lo), 0.01)
	}
	f.Y.Min, f.Y.Max = inv(lo-m), inv(hi+m)
}

// scaleFuncs returns the map of a y scale, up to an affine map, and its
// inverse.
func scaleFuncs(s plot.Normalizer) (fwd, inv func(float64) float64) {
	switch s := s.(type) {
	case plot.LogScale:
		return func(v float64) float64 {
			if v <= 0 {
				return math.NaN()
			}
			return math.Log(v)
		}, math.Exp
	case symlog:
		return func(v float64) float64 { return math.Asinh(v / s.c) },
			func(u float64) float64 { return s.c * math.Sinh(u) }
	}
	id := func(v float64) float64 { return v }
	return id, id
}

// The legend's box: the padding around its entries, the gap to the edges
// of the data area, and the margin kept around the data it must not cover.
const (
	legendPad    = vg.Length(4)
	legendGap    = vg.Length(6)
	legendMargin = vg.Length(5)
)

// legendSize returns the size of the legend's box, zero if it has no entry.
func legendSize(l *plot.Legend) (w, h vg.Length) {
	r := l.Rectangle(draw.Canvas{}) // its sides are swapped: take the size only
	w, h = vg.Length(math.Abs(float64(r.Max.X-r.Min.X))), vg.Length(math.Abs(float64(r.Max.Y-r.Min.Y)))
	if w <= 0 {
		return 0, 0
	}
	return w + 2*legendPad, h + 2*legendPad
}

// spots are the places for a legend of size w×h in the data area, in order
// of preference: the corners, then the middles of the edges.
func spots(dc draw.Canvas, w, h vg.Length) []vg.Rectangle {
	x := []vg.Length{dc.Max.X - legendGap - w, dc.Min.X + legendGap, (dc.Min.X + dc.Max.X - w) / 2}
	y := []vg.Length{dc.Max.Y - legendGap - h, dc.Min.Y + legendGap, (dc.Min.Y + dc.Max.Y - h) / 2}
	var out []vg.Rectangle
	for _, xy := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {2, 1}, {0, 2}, {1, 2}} {
		min := vg.Point{X: x[xy[0]], Y: y[xy[1]]}
		out = append(out, vg.Rectangle{Min: min, Max: min.Add(vg.Point{X: w, Y: h})})
	}
	return out
}

// covered counts the points and segments of the data, and the labels of
// the rules, that a legend at box would cover in the data area dc.
func (f *fig) covered(dc draw.Canvas, box vg.Rectangle) int {
	tx, ty := f.Transforms(&dc)
	b := vg.Rectangle{Min: box.Min.Sub(vg.Point{X: legendMargin, Y: legendMargin}), Max: box.Max.Add(vg.Point{X: legendMargin, Y: legendMargin})}
	n := 0
	for _, s := range f.data {
		var prev vg.Point
		ok := false
		for _, q := range s.pts {
			p := vg.Point{X: tx(q.X), Y: ty(q.Y)}
			if !finite(float64(p.X), float64(p.Y)) {
				ok = false
				continue
			}
			if s.joined && ok {
				if segmentHits(prev, p, b) {
					n++
				}
			} else if p.X >= b.Min.X && p.X <= b.Max.X && p.Y >= b.Min.Y && p.Y <= b.Max.Y {
				n++
			}
			prev, ok = p, true
		}
	}
	for _, r := range f.labelled {
		_, _, boxes := r.labelled(dc, f.Plot)
		for _, lb := range boxes {
			if lb.Min.X < b.Max.X && b.Min.X < lb.Max.X && lb.Min.Y < b.Max.Y && b.Min.Y < lb.Max.Y {
				n++
			}
		}
	}
	return n
}

// segmentHits reports whether the segment ab meets the rectangle r
// (Liang–Barsky clipping).
func segmentHits(a, b vg.Point, r vg.Rectangle) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	for _, e := range [4][2]float64{
		{-dx, float64(a.X - r.Min.X)}, {dx, float64(r.Max.X - a.X)},
		{-dy, float64(a.Y - r.Min.Y)}, {dy, float64(r.Max.Y - a.Y)},
	} {
		p, q := e[0], e[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / p
		if p < 0 {
			if t > t1 {
				return false
			}
			t0 = math.Max(t0, t)
		} else {
			if t < t0 {
				return false
			}
			t1 = math.Min(t1, t)
		}
	}
	return true
}

// bestSpot returns the first spot for the legend that covers nothing, else
// the one that covers least, and whether it covers nothing.
func (f *fig) bestSpot(dc draw.Canvas, w, h vg.Length) (vg.Rectangle, bool) {
	var best vg.Rectangle
	least := math.MaxInt
	for _, s := range spots(dc, w, h) {
		if n := f.covered(dc, s); n < least {
			best, least = s, n
			if n == 0 {
				break
			}
		}
	}
	return best, least == 0
}

// inner is the part of a figure's canvas for the plot, less the room of the
// y label, which draw puts itself.
func inner(c draw.Canvas) draw.Canvas {
	h := textStyle(12).Rectangle("Mg").Size().Y // the same for every label, to keep Align's alignment
	return draw.Crop(c, h+6, -10, 2, -4)
}

// dataCanvas is the data area of the figure drawn on c.
func (f *fig) dataCanvas(c draw.Canvas) draw.Canvas {
	label := f.Y.Label.Text
	defer func() { f.Y.Label.Text = label }()
	f.Y.Label.Text = ""
	return f.DataCanvas(inner(c))
}

// fitLegend makes room for the legend where it covers no data, once: if no
// spot in the data area drawn on c is free, it raises the top of the y axis
// to leave a band above the data for it.
func (f *fig) fitLegend(c draw.Canvas) {
	w, h := legendSize(&f.Legend)
	if w == 0 || f.fitted {
		return
	}
	f.fitted = true
	dc := f.dataCanvas(c)
	if _, free := f.bestSpot(dc, w, h); free {
		return
	}
	frac := math.Min(0.5, float64((h+2*legendGap)/(dc.Max.Y-dc.Min.Y)))
	fwd, inv := scaleFuncs(f.Y.Scale)
	u0, u1 := fwd(f.Y.Min), fwd(f.Y.Max)
	f.Y.Max = inv(u0 + (u1-u0)/(1-frac))
}

// draw draws the figure on c: the plot, its y label centred on the data
// area (gonum/plot centres it on the mean of the axis range, which is off
// the axis on a log scale and shrinks the plot) and its legend in the data
// area, on a translucent white box where it covers no data (see
// fitLegend).
func (f *fig) draw(c draw.Canvas) {
	label, leg := f.Y.Label.Text, f.Legend
	defer func() { f.Y.Label.Text, f.Legend = label, leg }()
	f.Y.Label.Text, f.Legend = "", plot.NewLegend()
	in := inner(c)
	f.Plot.Draw(in)
	dc := f.DataCanvas(in)
	sty := f.Y.Label.TextStyle
	sty.Rotation, sty.XAlign, sty.YAlign = math.Pi/2, draw.XCenter, draw.YTop
	c.FillText(sty, vg.Point{X: c.Min.X, Y: dc.Center().Y}, label)
	f.dataArea, f.legendBox = dc, vg.Rectangle{}
	w, h := legendSize(&leg)
	if w == 0 {
		return
	}
	f.Legend = leg
	box, _ := f.bestSpot(dc, w, h)
	c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 215})
	c.Fill(box.Path())
	f.drawLegend(c, leg, box, false)
}

// drawLegend draws leg inside box, less the padding, aligned to its top
// (and left if left), and records the box.
func (f *fig) drawLegend(c draw.Canvas, leg plot.Legend, box vg.Rectangle, left bool) {
	f.legendBox = box
	leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, left, 0, 0
	pad := vg.Point{X: legendPad, Y: legendPad}
	leg.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: box.Min.Add(pad), Max: box.Max.Sub(pad)}})
}

// render fits the legend and draws the figure on c.
func (f *fig) render(c draw.Canvas) {
	f.fitLegend(c)
	f.draw(c)
}

// renderLegendRight draws the figure on c with its legend in a column to
// the right of the plot, outside the data: for a legend too tall to sit in
// the data area (a profile of many methods) without stretching the axis.
func (f *fig) renderLegendRight(c draw.Canvas) {
	leg := f.Legend
	w, _ := legendSize(&leg)
	if w == 0 {
		f.draw(c)
		return
	}
	f.Legend = plot.NewLegend()
	split := c.Max.X - w - legendGap
	f.draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: c.Min, Max: vg.Point{X: split, Y: c.Max.Y}}})
	dc := f.dataArea
	f.Legend = leg
	f.drawLegend(c, leg, vg.Rectangle{Min: vg.Point{X: split, Y: dc.Min.Y}, Max: vg.Point{X: c.Max.X, Y: dc.Max.Y}}, true)
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
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ts = append(ts, plot.Tick{Value: v, Label: fmtTick(v)})
		if w := v + step/2; w <= hi {
			ts = append(ts, plot.Tick{Value: w})
		}
	}
	return ts
}

// minLabels is the fewest labelled ticks a log or symlog axis shows.
const minLabels = 3

// mantissaTick is a tick m·10^e of a log-like axis.
type mantissaTick struct {
	v    float64
	m, e int
}

// labelTicks labels the ticks by the first of the levels (coarse to fine)
// that labels at least minLabels values in [lo, hi]; if none does, the
// range is too narrow for them and it returns linear ticks.
func labelTicks(cands []mantissaTick, lo, hi float64, levels ...func(m, e int) bool) []plot.Tick {
	ts := make([]plot.Tick, len(cands))
	for _, label := range levels {
		n := 0
		for i, c := range cands {
			ts[i] = plot.Tick{Value: c.v}
			if label(c.m, c.e) {
				ts[i].Label = fmtTick(c.v)
				if c.v >= lo-1e-12*math.Abs(lo) && c.v <= hi+1e-12*math.Abs(hi) {
					n++
				}
			}
		}
		if n >= minLabels {
			return ts
		}
	}
	return linTicks{}.Ticks(lo, hi)
}

// logTicks labels the decades of a log axis (every few if there are many),
// or 1, 2 and 5 times them, or 1, 2, 3 and 5, whichever first gives
// minLabels labels; linear ticks on a narrower range.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi > lo) {
		return linTicks{}.Ticks(lo, hi)
	}
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	every := max(1, (e1-e0+7)/8)
	var cands []mantissaTick
	for e := e0; e <= e1; e++ {
		for m := 1; m < 10 && (m == 1 || e1-e0 <= 10); m++ {
			cands = append(cands, mantissaTick{float64(m) * math.Pow10(e), m, e})
		}
	}
	return labelTicks(cands, lo, hi,
		func(m, e int) bool { return m == 1 && (e-e0)%every == 0 },
		func(m, e int) bool { return m == 1 || m == 2 || m == 5 },
		func(m, e int) bool { return m <= 3 || m == 5 })
}

// symlog is a symmetric log scale, asinh(y/c): linear within ±c,
// logarithmic beyond, so that windows of Δ before and after drops of several
// orders of magnitude are all visible.
type symlog struct{ c float64 }

func (s symlog) Normalize(lo, hi, y float64) float64 {
	f := func(v float64) float64 { return math.Asinh(v / s.c) }
	return (f(y) - f(lo)) / (f(hi) - f(lo))
}

// Ticks labels 0 and ±10^e beyond c (every few decades if there are many),
// or also ±2 and ±5 times them, whichever first gives minLabels labels in
// the range; linear ticks on a narrower range.
func (s symlog) Ticks(lo, hi float64) []plot.Tick {
	top := math.Max(math.Abs(lo), math.Abs(hi))
	e0, e1 := int(math.Ceil(math.Log10(s.c))), int(math.Ceil(math.Log10(top)))
	every := max(1, (e1-e0+3)/4)
	cands := []mantissaTick{{0, 0, 0}}
	for e := e0; e <= e1; e++ {
		for m := 1; m < 10 && (m == 1 || e1-e0 <= 3); m++ { // minor ticks if they do not crowd
			v := float64(m) * math.Pow10(e)
			cands = append(cands, mantissaTick{v, m, e}, mantissaTick{-v, m, e})
		}
	}
	return labelTicks(cands, lo, hi,
		func(m, e int) bool { return m == 0 || m == 1 && (e1-e)%every == 0 },
		func(m, e int) bool { return m <= 2 || m == 5 })
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

// ruleText is the style of the rules' labels.
func (r rules) ruleText() text.Style {
	sty := textStyle(10)
	sty.Color = r.style.Color
	return sty
}

// labelled returns the labels that go in the data area c, with the point
// of each text and its box.
func (r rules) labelled(c draw.Canvas, p *plot.Plot) (texts []string, at []vg.Point, boxes []vg.Rectangle) {
	tx, _ := p.Transforms(&c)
	sty := r.ruleText()
	for i, x := range r.xs {
		if X := tx(x); i < len(r.labels) && X >= c.Min.X && X <= c.Max.X {
			pt := vg.Point{X: X + 3, Y: c.Max.Y - sty.Rectangle("M").Size().Y - 2}
			texts, at, boxes = append(texts, r.labels[i]), append(at, pt), append(boxes, sty.Rectangle(r.labels[i]).Add(pt))
		}
	}
	return texts, at, boxes
}

func (r rules) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for _, x := range r.xs {
		if X := tx(x); X >= c.Min.X && X <= c.Max.X {
			c.StrokeLine2(r.style, X, c.Min.Y, X, c.Max.Y)
		}
	}
	texts, at, boxes := r.labelled(c, p)
	for i, t := range texts {
		c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 210})
		c.Fill(boxes[i].Path())
		c.FillText(r.ruleText(), at[i], t)
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

func lineStyle(c color.Color, w vg.Length, dashes []vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(float64(w)), Dashes: dashes}
}

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
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
