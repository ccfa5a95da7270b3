package schedule

// dropRule is what the three drop rules, [SASA], [SASAPlus] and [Slope],
// share: α held constant between drops, α ← τα on a drop (paper Algorithm 1,
// line 9), the drop count, and the Begin/End protocol around their tests.
// Each rule keeps its own windows and test; the rule's restart of its windows
// is the reset passed to fire, closeStep and dropNow.
type dropRule struct {
	name  string // the scheduler's Name, for errors and the log
	opt   options
	st    stepper
	lr    float64 // α for the next step
	drops int
	cut   cutSpec
}

// cutSpec is the drop rule's part of a configuration.
type cutSpec struct {
	tau          float64 // τ
	divide       bool    // statopt: α ← α/(1/τ)
	keepMomentum bool    // do not ask the caller to zero the momentum
	after        int     // a drop needs k > after
}

func newDropRule(name string, lr0 float64, c cutSpec, opts []Option) dropRule {
	return dropRule{name: name, opt: buildOptions(opts), lr: lr0, cut: c}
}

func (r *dropRule) LR() float64                    { return r.lr }
func (r *dropRule) Step() int                      { return r.st.k }
func (r *dropRule) Searching() bool                { return false }
func (r *dropRule) Abort()                         { r.st.abort() }
func (r *dropRule) setOptions(o options)           { r.opt = o }
func (r *dropRule) between(what string) error      { return r.st.between(what) }
func (r *dropRule) Trial(float64) (Request, error) { return Request{}, noTrial(r.st.k + 1) }

// Begin opens step k+1. The rules need neither the loss nor ⟨g,s⟩ (SLOPE
// keeps the loss for End), but check both.
func (r *dropRule) Begin(loss, gd float64) (Request, error) {
	if err := r.st.begin(loss, gd); err != nil {
		return Request{}, err
	}
	return Request{LR: r.lr}, nil
}

// wants says whether a test at step k that found what it drops on (stationarity,
// or no decrease) drops: only after the configuration's DropAfter.
func (r *dropRule) wants(k int, tested, found bool) bool {
	return tested && found && k > r.cut.after
}

// next is α after a drop from lr at step k; an error when it underflows.
func (r *dropRule) next(k int, lr float64) (float64, error) {
	return dropped(r.name, k, lr, r.cut.tau, r.cut.divide)
}

// fire sets α to next, counts the drop and restarts the windows with reset.
func (r *dropRule) fire(k int, next float64, reason string, reset func()) Event {
	r.lr = next
	r.drops++
	reset()
	return Event{Step: k, Kind: KindDrop, NewLR: r.lr, Reason: reason}
}

// closeStep commits step k run at α = lr: ev is the test's event when tested,
// and drop (with the rate next) says that it drops. It cannot fail.
func (r *dropRule) closeStep(k int, lr float64, tested bool, ev *Event, drop bool, next float64, reason string, reset func()) Result {
	r.st.commit()
	r.lr = lr
	res := Result{Step: k, LR: lr}
	if tested {
		res.Events = append(res.Events, *ev)
		if drop {
			res.Events = append(res.Events, r.fire(k, next, reason, reset))
			res.ResetMomentum = !r.cut.keepMomentum
		}
	}
	res.NextLR = r.lr
	return res
}

// dropNow implements [Dropper] between steps.
func (r *dropRule) dropNow(reason string, reset func()) (Result, error) {
	if err := r.st.between("Drop"); err != nil {
		return Result{}, err
	}
	next, err := r.next(r.st.k, r.lr)
	if err != nil {
		return Result{}, err
	}
	ev := r.fire(r.st.k, next, reason, reset)
	r.opt.emit(r.name, []Event{ev})
	return Result{Step: r.st.k, LR: r.lr, NextLR: r.lr, ResetMomentum: !r.cut.keepMomentum, Events: []Event{ev}}, nil
}

// restoreRule checks and sets the state the rules share; field names the
// state type in errors ("SASAState").
func (r *dropRule) restoreRule(field string, step, drops int, lr float64) error {
	if err := firstErr(checkIntMin(field+".Step", step, 0), checkIntMin(field+".Drops", drops, 0),
		checkPos(field+".LR", lr)); err != nil {
		return err
	}
	r.st = stepper{k: step}
	r.lr, r.drops = lr, drops
	return nil
}
