package train

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/salsaopt/salsa/schedule"
)

// PlainStepper is implemented by engines that can make a step with no
// scheduler and no statistics: the baseline of the overhead benchmark.
type PlainStepper interface {
	PlainStep(b Batch, lr float64) (loss float64, err error)
}

// BenchRow is one line of the table Bench prints.
type BenchRow struct {
	Engine, Step string
	MsPerStep    float64 // median over rounds
	Ratio        float64 // to the plain step of the same engine, measured in the same rounds
}

// Bench measures, for each engine, ms/step of a plain step, of a SASA+ step
// (the statistics and the test, paper defaults) and of an SSLS step (the
// line search with its trials), interleaved round by round so that the
// ratios compare like with like on a shared machine.
//
// It fails, printing nothing, when engines is empty or rounds or steps is
// below 1: a table must never be empty.
func Bench(engines []string, p *Plan, train *Split, rounds, steps int, w io.Writer) ([]BenchRow, error) {
	if len(engines) == 0 {
		return nil, errors.New("bench: no engine to time")
	}
	if rounds < 1 || steps < 1 {
		return nil, fmt.Errorf("bench: %d rounds of %d steps: both must be ≥ 1", rounds, steps)
	}
	var rows []BenchRow
	for _, name := range engines {
		mk := Engines[name]
		if mk == nil {
			return nil, fmt.Errorf("engine %q is not built in", name)
		}
		kinds := []string{"plain", "sasa+", "ssls"}
		engs := map[string]Engine{}
		scheds := map[string]schedule.Scheduler{}
		for _, k := range kinds {
			e, err := mk(p, train)
			if err != nil {
				return nil, err
			}
			engs[k] = e
			if k != "plain" {
				if scheds[k], err = schedule.New(k, p.Schedule); err != nil {
					return nil, err
				}
			}
		}
		ps, ok := engs["plain"].(PlainStepper)
		if !ok {
			return nil, fmt.Errorf("engine %q has no plain step", name)
		}
		r := rand.New(rand.NewPCG(1, 2))
		idx := make([]int, p.Options.Batch)
		text := train.Tokens != nil
		times := map[string][]float64{}
		for round := 0; round <= rounds; round++ {
			for _, k := range kinds {
				start := time.Now()
				for step := range steps {
					b := Batch{Epoch: 1, Step: round*steps + step + 1}
					if text {
						b.Chunk = r.IntN(p.StepsPerEpoch)
					} else {
						for i := range idx {
							idx[i] = r.IntN(train.N())
						}
						b.Idx = idx
					}
					var err error
					if k == "plain" {
						_, err = ps.PlainStep(b, p.Options.LR0)
					} else {
						_, err = engs[k].Step(scheds[k], b)
					}
					if err != nil {
						return nil, fmt.Errorf("%s %s: %w", name, k, err)
					}
				}
				if round > 0 { // round 0 warms up (compilation, caches)
					times[k] = append(times[k], time.Since(start).Seconds()*1e3/float64(steps))
				}
			}
		}
		med := func(v []float64) float64 {
			v = append([]float64(nil), v...)
			sort.Float64s(v)
			return v[len(v)/2]
		}
		for _, k := range kinds {
			// The ratio of medians of per-round ratios: robust to a noisy round.
			var ratios []float64
			for i := range times[k] {
				ratios = append(ratios, times[k][i]/times["plain"][i])
			}
			rows = append(rows, BenchRow{Engine: name, Step: k, MsPerStep: med(times[k]), Ratio: med(ratios)})
		}
	}
	if w != nil {
		fmt.Fprintf(w, "| engine | step | ms/step | ratio to plain |\n|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %.3f | %.3f× |\n", r.Engine, r.Step, r.MsPerStep, r.Ratio)
		}
		fmt.Fprintln(w)
		for _, r := range rows {
			fmt.Fprintf(w, "bench: model=%s engine=%s kind=%s ms_per_step=%.3f\n", p.Options.Model, r.Engine, r.Step, r.MsPerStep)
		}
	}
	return rows, nil
}
