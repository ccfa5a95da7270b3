package plots

import (
	"fmt"
	"math"
	"os"
	"slices"

	"gonum.org/v1/plot/plotter"
)

// ProfileCurve is one method's performance profile: its time-to-target
// ratios r = t/t_fastest over the tasks, +Inf where it did not reach the
// target.
type ProfileCurve struct {
	Name   string
	Ratios []float64
}

// ProfileAt is ρ(τ): the fraction of the ratios that are ≤ τ.
func ProfileAt(ratios []float64, tau float64) float64 {
	if len(ratios) == 0 {
		return 0
	}
	n := 0
	for _, r := range ratios {
		if r <= tau {
			n++
		}
	}
	return float64(n) / float64(len(ratios))
}

// ProfilePoints is the step function ρ(τ) for τ from 1 to rMax: a point
// before and after each jump.
func ProfilePoints(ratios []float64, rMax float64) plotter.XYs {
	rs := slices.Clone(ratios)
	slices.Sort(rs)
	pts := plotter.XYs{{X: 1, Y: ProfileAt(rs, 1)}}
	for _, r := range rs {
		if r <= 1 || r > rMax || r == pts[len(pts)-1].X {
			continue
		}
		pts = append(pts, plotter.XY{X: r, Y: pts[len(pts)-1].Y}, plotter.XY{X: r, Y: ProfileAt(rs, r)})
	}
	return append(pts, plotter.XY{X: rMax, Y: ProfileAt(rs, rMax)})
}

// DrawProfileTo draws the performance profiles (AlgoPerf's: the fraction of
// the tasks a method reaches the target within τ times the fastest method's
// time, for τ from 1 to rMax) as profile.png and profile.svg in out.
func DrawProfileTo(curves []ProfileCurve, rMax float64, tasks int, timeName, out string) (Drawn, error) {
	var d Drawn
	if len(curves) == 0 {
		return d, fmt.Errorf("plots: no methods to profile")
	}
	if math.IsInf(rMax, 0) || !(rMax > 1) {
		return d, fmt.Errorf("plots: r_max %v: must be finite and > 1", rMax)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return d, fmt.Errorf("plots: output directory: %w", err)
	}
	f := newFig(fmt.Sprintf("Performance profiles over %d task(s)", tasks),
		fmt.Sprintf("τ: %s to target, relative to the fastest method", timeName), "fraction of tasks reaching the target within τ·fastest")
	for i, c := range curves {
		f.runLine(cmpRun{name: c.Name, sty: styleOf(i, len(curves))}, ProfilePoints(c.Ratios, rMax))
	}
	f.X.Min, f.X.Max = 1, rMax
	f.padY([]float64{0, 1})
	return d, d.save(out, "profile", figW, figH, f.renderLegendRight)
}
