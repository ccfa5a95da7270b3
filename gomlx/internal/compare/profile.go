package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/salsaopt/salsa/gomlx/internal/plots"
)

// RMax is AlgoPerf's r_max: a method slower than RMax times the fastest
// on a task does not solve it.
const RMax = 4.0

// ProfileTaus are the τ at which the profile table gives ρ(τ).
var ProfileTaus = []float64{1, 1.25, 1.5, 2, 3, 4}

// Profile is the performance profile of the methods over tasks.
type Profile struct {
	Tasks   []string
	Methods []string
	Unit    string      // seconds, epochs or steps
	Times   [][]float64 // [method][task]: median time to target; +Inf not reached or not run
	Ratios  [][]float64 // [method][task]: Times / the task's fastest; +Inf beyond RMax
}

// ReadSummary reads a compare directory's summary.json.
func ReadSummary(dir string) (*Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, fmt.Errorf("--profile %s: %w (run salsa compare --out %s first)", dir, err, dir)
	}
	s := new(Summary)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("--profile %s: %s: %w", dir, SummaryFile, err)
	}
	return s, nil
}

// NewProfile computes the profile of the rows of summaries (one per task),
// a row by its name; a method absent from a task does not solve it.
func NewProfile(tasks []string, sums []*Summary, unit string) *Profile {
	p := &Profile{Tasks: tasks, Unit: unit}
	for _, s := range sums {
		for _, r := range s.Rows {
			if !slices.Contains(p.Methods, r.Name) {
				p.Methods = append(p.Methods, r.Name)
			}
		}
	}
	for _, m := range p.Methods {
		t := make([]float64, len(sums))
		for ti, s := range sums {
			t[ti] = math.Inf(1)
			for _, r := range s.Rows {
				if r.Name == m {
					t[ti] = r.TimeTo(unit)
				}
			}
		}
		p.Times = append(p.Times, t)
	}
	return p.ratios()
}

// ratios fills Ratios from Times.
func (p *Profile) ratios() *Profile {
	p.Ratios = make([][]float64, len(p.Methods))
	for mi := range p.Methods {
		p.Ratios[mi] = make([]float64, len(p.Tasks))
	}
	for ti := range p.Tasks {
		best := math.Inf(1)
		for mi := range p.Methods {
			best = math.Min(best, p.Times[mi][ti])
		}
		for mi := range p.Methods {
			r := p.Times[mi][ti] / best
			if math.IsInf(best, 1) || math.IsNaN(r) || r > RMax {
				r = math.Inf(1)
			}
			if best == 0 && p.Times[mi][ti] == 0 {
				r = 1
			}
			p.Ratios[mi][ti] = r
		}
	}
	return p
}

// Rho is ρ_m(τ): the fraction of the tasks method mi solves within τ times
// the fastest.
func (p *Profile) Rho(mi int, tau float64) float64 { return plots.ProfileAt(p.Ratios[mi], tau) }

// Score is AlgoPerf's benchmark score: the area under ρ_m(τ) over [1, RMax],
// divided by RMax − 1 (1: fastest on every task; 0: solves none).
func (p *Profile) Score(mi int) float64 {
	if len(p.Tasks) == 0 {
		return 0
	}
	area := 0.0
	for _, r := range p.Ratios[mi] {
		if r <= RMax {
			area += RMax - math.Max(r, 1)
		}
	}
	return area / (RMax - 1) / float64(len(p.Tasks))
}

// Table is the profile as markdown: ρ at ProfileTaus and the score, then
// each task's times and ratios.
func (p *Profile) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Performance profiles\n\nρ(τ): the fraction of the %d task(s) on which a method reaches its task's target within τ times the fastest method's %s to target (median over seeds); r_max = %g (slower counts as not solved), as AlgoPerf. Score: the area under ρ over [1, r_max] / (r_max − 1).\n\n", len(p.Tasks), p.Unit, RMax)
	b.WriteString("| method |")
	for _, t := range ProfileTaus {
		fmt.Fprintf(&b, " ρ(%g) |", t)
	}
	b.WriteString(" score |\n|---|")
	b.WriteString(strings.Repeat("---|", len(ProfileTaus)+1) + "\n")
	for mi, m := range p.Methods {
		fmt.Fprintf(&b, "| %s |", m)
		for _, t := range ProfileTaus {
			fmt.Fprintf(&b, " %.2f |", p.Rho(mi, t))
		}
		fmt.Fprintf(&b, " %.3f |\n", p.Score(mi))
	}
	fmt.Fprintf(&b, "\n## %s to target (ratio to the fastest)\n\n| method |", p.Unit)
	for _, t := range p.Tasks {
		fmt.Fprintf(&b, " %s |", t)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(p.Tasks)) + "\n")
	for mi, m := range p.Methods {
		fmt.Fprintf(&b, "| %s |", m)
		for ti := range p.Tasks {
			t, r := p.Times[mi][ti], p.Ratios[mi][ti]
			switch {
			case math.IsInf(t, 1):
				b.WriteString(" not reached |")
			case math.IsInf(r, 1):
				fmt.Fprintf(&b, " %.4g (> r_max) |", t)
			default:
				fmt.Fprintf(&b, " %.4g (%.2f) |", t, r)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// WriteProfile writes profile.md, profile.png and profile.svg into out.
func (p *Profile) WriteProfile(out string) (plots.Drawn, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return plots.Drawn{}, err
	}
	if err := os.WriteFile(filepath.Join(out, "profile.md"), []byte(p.Table()), 0o644); err != nil {
		return plots.Drawn{}, err
	}
	var curves []plots.ProfileCurve
	for mi, m := range p.Methods {
		curves = append(curves, plots.ProfileCurve{Name: m, Ratios: p.Ratios[mi]})
	}
	d, err := plots.DrawProfileTo(curves, RMax, len(p.Tasks), p.Unit, out)
	d.Files = append([]string{filepath.Join(out, "profile.md")}, d.Files...)
	return d, err
}
