package schedule

import "math"

// The rate probe of [TailConfig.Probe]. SSLS's level is a one-step test on
// the mini-batch, and on the deep tasks it settles far below the best
// constant rate (docs/parity: 0.016 on the cnn, where the tuned rate is 1).
// The probe tests a rate over a window of steps instead of one: from SALSA's
// switch it doubles the rate every W steps for as long as the window's mean
// mini-batch loss is not significantly above the last accepted window's,
// and at the first window that is, or at the second step in a row whose
// loss is an outlier, it goes back to the last accepted rate and hands over
// to the decay. It is not in the paper: docs/parity gives its measurements,
// made after the held-out tasks had been seen.
const (
	// probeShare is W's share of the budget: W = max(2, round(0.05·T)).
	probeShare = 0.05
	// probeRaise is the factor a window raises the rate by: ρ_inc = 2, as in SSLS.
	probeRaise = 2.0
	// probeZ is the one-sided normal quantile at δ = 0.05: a window is
	// rejected when its mean exceeds the accepted one by z·√(2·σ̂²_m).
	probeZ = 1.645
	// probeOutlier is in standard deviations of one step's loss in the
	// accepted window: two losses in a row above its mean by more end the
	// probe at once. A single one came from hard mini-batches at twice
	// SSLS's rate on the cnn (docs/parity); a rate that diverges gives several.
	probeOutlier = 4.0
	// probeHot is how many outliers in a row end the probe.
	probeHot = 2
)

// probeWindow is the probe's window W.
func (c TailConfig) probeWindow() int {
	return max(2, int(math.Round(probeShare*float64(c.Steps))))
}

// probeState is the probe's state, all of it in a [Tail] snapshot.
type probeState struct {
	On   bool      // the probe is running: SALSA has switched, the decay has not begun
	LR   float64   // the rate under test
	OK   float64   // the last accepted rate
	Prev float64   // the last accepted window's mean loss (at first: the W steps before the switch)
	Var  float64   // the variance of that mean, σ̂²/n
	PN   int       // that window's length n; below 2 there is nothing to compare with, and every window passes
	Sum  float64   // Σ f over the current window
	Sq   float64   // Σ f² over the current window
	N    int       // steps in the current window
	Hot  int       // outliers in a row, up to the last step
	Ring []float64 // before the switch: the last W losses
}

// meanVar returns the mean of n values from their sum and sum of squares,
// and the variance of that mean (the sample variance over n); 0 for n < 2.
func meanVar(sum, sq float64, n int) (m, v float64) {
	if n == 0 {
		return 0, 0
	}
	fn := float64(n)
	m = sum / fn
	if n > 1 {
		v = max(0, (sq/fn-m*m)*fn/(fn-1)) / fn
	}
	return m, v
}

// record keeps loss among the last w before the switch.
func (p *probeState) record(loss float64, w int) {
	p.Ring = append(p.Ring, loss)
	if len(p.Ring) > w {
		p.Ring = p.Ring[len(p.Ring)-w:]
	}
}

// start begins the probe at rate lr, with the window before the switch as
// the first accepted one.
func (p *probeState) start(lr float64) {
	var sum, sq float64
	for _, f := range p.Ring {
		sum += f
		sq += f * f
	}
	m, v := meanVar(sum, sq, len(p.Ring)) // PN < 2: no window to compare with
	*p = probeState{On: true, OK: lr, LR: probeRaise * lr, Prev: m, Var: v, PN: len(p.Ring)}
}

// add counts a step's loss in the current window; sub undoes it.
func (p *probeState) add(loss float64) { p.Sum, p.Sq, p.N = p.Sum+loss, p.Sq+loss*loss, p.N+1 }
func (p *probeState) sub(loss float64) { p.Sum, p.Sq, p.N = p.Sum-loss, p.Sq-loss*loss, p.N-1 }

// end closes step k, whose loss was loss, at the rate under test; last is
// true at the latest step the decay may begin. It returns the step's events
// and, when the probe is over, the rate the decay begins from.
func (p *probeState) end(k int, loss float64, w int, last bool) (evs []Event, done bool, from float64) {
	if sd := math.Sqrt(p.Var * float64(p.PN)); p.PN > 1 && loss > p.Prev+probeOutlier*sd {
		p.Hot++
	} else {
		p.Hot = 0
	}
	if p.Hot >= probeHot {
		evs = append(evs, Event{Step: k, Kind: KindProbe, Count: p.N, Mean: loss, Prev: p.Prev, NewLR: p.LR, Reason: "outlier"})
		p.On = false
		return evs, true, p.OK
	}
	if p.N < w && !last {
		return nil, false, 0
	}
	m, v := meanVar(p.Sum, p.Sq, p.N)
	accept := p.N >= w && (p.PN < 2 || m < p.Prev+probeZ*math.Sqrt(2*p.Var))
	evs = append(evs, Event{Step: k, Kind: KindProbe, Count: p.N, Mean: m, Prev: p.Prev, Accept: accept, NewLR: p.LR})
	if accept {
		p.OK, p.Prev, p.Var, p.PN, p.LR = p.LR, m, v, p.N, probeRaise*p.LR
	}
	p.Sum, p.Sq, p.N = 0, 0, 0
	if !accept || last {
		p.On = false
		return evs, true, p.OK
	}
	return evs, false, 0
}

// check validates a restored probe state.
func (p *probeState) check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"TailState.Probe.LR", p.LR}, {"TailState.Probe.OK", p.OK}, {"TailState.Probe.Var", p.Var}, {"TailState.Probe.Sum", p.Sum}, {"TailState.Probe.Sq", p.Sq}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || (f.v < 0 && f.name != "TailState.Probe.Sum") {
			return &FieldError{f.name, f.v, "must be finite (and ≥ 0 but for Sum)"}
		}
	}
	if math.IsNaN(p.Prev) || math.IsInf(p.Prev, 0) {
		return &FieldError{"TailState.Probe.Prev", p.Prev, "must be finite"}
	}
	if err := firstErr(checkIntMin("TailState.Probe.N", p.N, 0), checkIntMin("TailState.Probe.PN", p.PN, 0), checkIntMin("TailState.Probe.Hot", p.Hot, 0)); err != nil {
		return err
	}
	for _, f := range p.Ring {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return &FieldError{"TailState.Probe.Ring", f, "must be finite"}
		}
	}
	return nil
}
