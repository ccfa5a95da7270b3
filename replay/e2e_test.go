package replay_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/salsaopt/salsa/internal/conformance"

	"github.com/salsaopt/salsa/direction"
	"github.com/salsaopt/salsa/internal/synthetic"
	"github.com/salsaopt/salsa/replay"
	"github.com/salsaopt/salsa/schedule"
)

// chaotic lists the SALSA runs whose SSLS phase runs at α ≈ 4–30, where a
// last-bit difference from PyTorch's kernels grows about tenfold every 50–65
// steps: float64 agreement passes 1e-9 relative near steps 396–495 and is
// gone by step ~900 (measured with internal/synthetic's bit-level replay).
// They are compared over their first 300 steps; lsq_salsa_lr1e-3 and every
// SASA+ run are compared over all 20 000.
var chaotic = map[string]bool{
	"logreg_salsa_lr1e-1":     true,
	"mlp_salsa_lr1e-3":        true,
	"mlp_salsa_lr1e-3_wd1e-4": true,
}

// TestEndToEnd rebuilds the three synthetic problems in float64, trains each
// public run's model with our QHM direction and statopt-preset scheduler, and
// requires the recorded trajectory: loss and d2 within 1e-9 relative at every
// step, and the recorded events.
func TestEndToEnd(t *testing.T) {
	dir := conformance.PublicDir(t)
	problems := map[string]*synthetic.Problem{}
	for _, run := range runs(t, dir) {
		t.Run(run, func(t *testing.T) {
			meta, rows, want := readRun(t, dir, run)
			p := problems[meta.Problem]
			if p == nil {
				var err error
				if p, err = synthetic.Load(filepath.Join(dir, "problems"), meta.Problem); err != nil {
					t.Fatal(err)
				}
				problems[meta.Problem] = p
			}
			steps := len(rows)
			if chaotic[run] {
				steps = 300
			} else if testing.Short() {
				steps = 2000
			}
			method, cfg, err := replay.FromStatopt(&meta.Config)
			if err != nil {
				t.Fatal(err)
			}
			s, err := schedule.New(method, cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := meta.Config
			d, err := direction.NewQHM[float64](direction.QHMConfig{Beta: c.Momentum, Nu: c.QHMNu, WeightDecay: c.WeightDecay}, len(p.Init))
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Run(s, d, c.WeightDecay, steps)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for i, g := range res.Rows {
				w := rows[i]
				for _, f := range [][2]float64{{g.Loss, w.Loss}, {g.D2, w.D2}} {
					rel := math.Abs(f[0]-f[1]) / math.Max(math.Abs(f[0]), math.Abs(f[1]))
					worst = math.Max(worst, rel)
					if !(rel <= 1e-9) {
						t.Fatalf("step %d: loss %v d2 %v, want %v %v", g.Step, g.Loss, g.D2, w.Loss, w.D2)
					}
				}
				if g.LR != w.LR || g.HasEta != w.HasEta || g.Eta != w.Eta {
					t.Fatalf("step %d: lr %v eta %v, want %v %v", g.Step, g.LR, g.Eta, w.LR, w.Eta)
				}
			}
			var prefix []schedule.Event
			for _, e := range want {
				if e.Step <= steps {
					prefix = append(prefix, e)
				}
			}
			compareEvents(t, res.Events, prefix, 1e-9)
			t.Logf("%d steps, %d events, worst loss/d2 relative error %.2g", steps, len(prefix), worst)
		})
	}
}
