package schedule_test

import (
	"testing"

	"github.com/salsaopt/salsa/schedule"
)

// BenchmarkStep measures one Begin/Trial*/End round per method, with the
// paper's defaults for MNIST (n = 60000, b = 128): the per-step cost the
// host adds to a training step. Tests fall due every K_test = 100 steps.
// The scheduler starts afresh every 30 epochs (14 062 steps), the run the
// defaults are for: the alternating Δ below is stationary, so SASA+ drops at
// every test, and within one scheduler α would underflow after about 300
// drops, which End reports as an error.
func BenchmarkStep(b *testing.B) {
	const run = 30 * 60000 / 128
	for _, m := range []string{"constant", "sasa+", "ssls", "salsa"} {
		b.Run(m, func(b *testing.B) {
			c, _ := schedule.Defaults(schedule.PresetPaper, 60000, 128, 0.1)
			var s schedule.Scheduler
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%run == 0 {
					var err error
					if s, err = schedule.New(m, c); err != nil {
						b.Fatal(err)
					}
				}
				req, err := s.Begin(1, 1)
				if err != nil {
					b.Fatal(err)
				}
				for req.Eval {
					req, _ = s.Trial(0.5)
				}
				sign := float64(1 - 2*(i&1))
				if _, err := s.End(schedule.Observation{X1D: 0.01 * sign, D2: 1e-4}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
