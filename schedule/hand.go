package schedule

// handState is the state of the hand-written schedules: the step count and
// the current peak rate, which drops multiply by τ.
type handState struct {
	Step int
	LR   float64 // Constant, Cut: α for the next step; Warmup: the peak rate after drops
}

// hand is what Constant, Cut and Warmup share: no statistics, an optional
// list of drop steps, and drops on request.
type hand struct {
	name   string
	opt    options
	st     stepper
	peak   float64
	tau    float64
	divide bool
	drops  []int
	warm   int // warmup steps (Warmup only)
}

func (h *hand) Name() string                   { return h.name }
func (h *hand) Step() int                      { return h.st.k }
func (h *hand) Searching() bool                { return false }
func (h *hand) Abort()                         { h.st.abort() }
func (h *hand) setOptions(o options)           { h.opt = o }
func (h *hand) between(what string) error      { return h.st.between(what) }
func (h *hand) Trial(float64) (Request, error) { return Request{}, noTrial(h.st.k + 1) }

// lrAt is α for step k (1-based): linear warmup α·k/W for k ≤ W.
func (h *hand) lrAt(k int) float64 {
	if k <= h.warm {
		return h.peak * float64(k) / float64(h.warm)
	}
	return h.peak
}

// LR is the rate of the next step.
func (h *hand) LR() float64 { return h.lrAt(h.st.k + 1) }

// Begin opens a step.
func (h *hand) Begin(loss, gd float64) (Request, error) {
	if err := h.st.begin(loss, gd); err != nil {
		return Request{}, err
	}
	return Request{LR: h.lrAt(h.st.k + 1)}, nil
}

// End closes the step and applies a scheduled drop.
func (h *hand) End(obs Observation) (Result, error) {
	lr := h.lrAt(h.st.k + 1)
	if _, err := h.st.checkEnd(obs, lr); err != nil {
		return Result{}, err
	}
	k, peak := h.st.k+1, h.peak
	var nexts []float64 // the peak after each drop listed at step k
	for _, s := range h.drops {
		if s == k {
			var err error
			if peak, err = dropped(h.name, k, peak, h.tau, h.divide); err != nil {
				return Result{}, err
			}
			nexts = append(nexts, peak)
		}
	}
	h.st.commit()
	res := Result{Step: k, LR: lr}
	for _, next := range nexts {
		res.Events = append(res.Events, h.drop(k, next, "schedule"))
	}
	res.NextLR = h.LR()
	h.opt.emit(h.name, res.Events)
	return res, nil
}

// drop sets the peak rate to next, the rate dropped computed.
func (h *hand) drop(k int, next float64, reason string) Event {
	h.peak = next
	return Event{Step: k, Kind: KindDrop, NewLR: h.peak, Reason: reason}
}

// Drop implements [Dropper]. Hand schedules keep the momentum, as PyTorch's
// step schedules do.
func (h *hand) Drop(reason string) (Result, error) {
	if err := h.st.between("Drop"); err != nil {
		return Result{}, err
	}
	next, err := dropped(h.name, h.st.k, h.peak, h.tau, h.divide)
	if err != nil {
		return Result{}, err
	}
	ev := h.drop(h.st.k, next, reason)
	h.opt.emit(h.name, []Event{ev})
	return Result{Step: h.st.k, LR: h.LR(), NextLR: h.LR(), Events: []Event{ev}}, nil
}

func (h *hand) state() handState { return handState{Step: h.st.k, LR: h.peak} }

func (h *hand) setState(st handState) error {
	if err := h.st.between("SetState"); err != nil {
		return err
	}
	if err := firstErr(checkIntMin("State.Step", st.Step, 0), checkPos("State.LR", st.LR)); err != nil {
		return err
	}
	h.st = stepper{k: st.Step}
	h.peak = st.LR
	return nil
}

func (h *hand) marshal(cfg any) ([]byte, error) {
	if err := h.st.between("MarshalBinary"); err != nil {
		return nil, err
	}
	return marshalSnapshot(h.name, cfg, h.state())
}

// Constant is a constant learning rate (SGD w/ val when wrapped in
// [WithValidation]).
type Constant struct {
	hand
	cfg ConstantConfig
}

// NewConstant returns a constant schedule.
func NewConstant(cfg ConstantConfig, opts ...Option) (*Constant, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Constant{cfg: cfg, hand: hand{name: "constant", opt: buildOptions(opts), peak: cfg.LR, tau: cfg.Tau}}, nil
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (c *Constant) MarshalBinary() ([]byte, error) { return c.marshal(c.cfg) }

// UnmarshalBinary restores a snapshot into any Constant value.
func (c *Constant) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "constant", NewConstant, (*Constant).setState)
	if err != nil {
		return err
	}
	n.opt = c.opt
	*c = *n
	return nil
}

// Cut is the hand-tuned constant-and-cut schedule (SHB-hand in the paper):
// α ← τα at the end of each listed step.
type Cut struct {
	hand
	cfg CutConfig
}

// NewCut returns a constant-and-cut schedule.
func NewCut(cfg CutConfig, opts ...Option) (*Cut, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Cut{cfg: cfg, hand: hand{name: "cut", opt: buildOptions(opts), peak: cfg.LR0, tau: cfg.Tau,
		divide: cfg.DivideLR, drops: append([]int(nil), cfg.DropSteps...)}}, nil
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (c *Cut) MarshalBinary() ([]byte, error) { return c.marshal(c.cfg) }

// UnmarshalBinary restores a snapshot into any Cut value.
func (c *Cut) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "cut", NewCut, (*Cut).setState)
	if err != nil {
		return err
	}
	n.opt = c.opt
	*c = *n
	return nil
}

// Warmup is a linear warmup to a peak rate, then constant-and-cut: the
// schedule of the paper's "Adam w/ warmup" baseline.
type Warmup struct {
	hand
	cfg WarmupConfig
}

// NewWarmup returns a warmup schedule.
func NewWarmup(cfg WarmupConfig, opts ...Option) (*Warmup, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Warmup{cfg: cfg, hand: hand{name: "warmup", opt: buildOptions(opts), peak: cfg.LR, tau: cfg.Tau,
		drops: append([]int(nil), cfg.DropSteps...), warm: cfg.Steps}}, nil
}

// MarshalBinary writes a versioned snapshot; it fails while a step is open.
func (w *Warmup) MarshalBinary() ([]byte, error) { return w.marshal(w.cfg) }

// UnmarshalBinary restores a snapshot into any Warmup value.
func (w *Warmup) UnmarshalBinary(data []byte) error {
	n, err := restore(data, "warmup", NewWarmup, (*Warmup).setState)
	if err != nil {
		return err
	}
	n.opt = w.opt
	*w = *n
	return nil
}
