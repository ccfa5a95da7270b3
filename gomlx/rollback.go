package salsagomlx

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/schedule"
)

// keptScope holds the copy of the parameters that salsa-budget's rate probe
// confirms ([schedule.Result.Confirm]) and puts back
// ([schedule.Result.Rollback]), and candScope the candidate it asks to
// copy first ([schedule.Result.Save]), until it releases them
// ([schedule.Result.Release]): the variable at path p is kept at
// keptScope+p, its candidate at candScope+p, and with
// [schedule.TailConfig.ProbeLevelCopy] the copy kept before at
// earlierScope+p ([schedule.Result.KeepEarlier]). All are in the
// trainer's snapshot and, being in the store, in a GoMLX checkpoint.
const (
	keptScope    = StateScope + "/kept"
	candScope    = StateScope + "/candidate"
	earlierScope = StateScope + "/earlier"
)

// copyScopes are the scopes of the parameters' copies.
var copyScopes = []string{candScope, keptScope, earlierScope}

// copyPath reports whether p is a variable of the parameters' copies.
func copyPath(p string) bool {
	for _, sc := range copyScopes {
		if strings.HasPrefix(p, sc+"/") {
			return true
		}
	}
	return false
}

// keptSources lists the variables a rollback puts back, in store order:
// every variable under /model (batch-norm running statistics included),
// every other trainable variable outside the trainer's own scope, and, in a
// train.Loop, the non-trainable ones its step graph reads there (the
// model's statistics at the loop's scope).
func (t *Trainer) keptSources() []*model.Variable {
	var vs []*model.Variable
	for v := range t.store.IterVariables() {
		p := v.Path()
		if strings.HasPrefix(p, StateScope+"/") {
			continue
		}
		if strings.HasPrefix(p, "/model/") || v.Trainable || t.loopStats[v] {
			vs = append(vs, v)
		}
	}
	return vs
}

// keepOrRollback copies the parameters as a candidate when res asks for
// one (Save), makes the candidate the kept copy (Confirm), the kept one
// first the earlier copy (KeepEarlier), and puts the kept copy, or the
// earlier one (RollbackEarlier), back (Rollback); the caller then zeroes
// the momentum. On a release, after that, it deletes the copies, which no
// later snapshot then carries.
// A Host direction's averages cannot be rolled back, so a Save or a
// Rollback is an error with it.
func (t *Trainer) keepOrRollback(res schedule.Result) error {
	if (res.Save || res.Rollback) && t.cfg.Direction == Host {
		return fmt.Errorf("salsagomlx: step %d: a rollback of the parameters with the Host direction: its own state "+
			"(the averages) cannot be rolled back", res.Step)
	}
	if err := res.CheckEarlier(); err != nil {
		return fmt.Errorf("salsagomlx: %w", err)
	}
	if !res.Save && !res.Confirm && !res.Rollback && !res.Release {
		return nil // most steps: no walk over the store
	}
	src := t.keptSources()
	if res.Save {
		if err := t.copyInto(src, "", candScope); err != nil {
			return fmt.Errorf("salsagomlx: step %d: the candidate copy: %w", res.Step, err)
		}
	}
	if res.Confirm && res.KeepEarlier && t.hasCopy(src, keptScope) {
		if err := t.copyInto(src, keptScope, earlierScope); err != nil {
			return fmt.Errorf("salsagomlx: step %d: keeping the earlier copy: %w", res.Step, err)
		}
	}
	if res.Confirm {
		if err := t.copyInto(src, candScope, keptScope); err != nil {
			return fmt.Errorf("salsagomlx: step %d: confirming the candidate copy: %w", res.Step, err)
		}
		if err := t.store.DeleteVariablesInScope(candScope); err != nil {
			return err
		}
	}
	if res.Rollback {
		from := keptScope
		if res.RollbackEarlier {
			from = earlierScope
		}
		if err := t.copyInto(src, from, ""); err != nil {
			return fmt.Errorf("salsagomlx: step %d: the rollback: %w", res.Step, err)
		}
	}
	if !res.Release {
		return nil
	}
	for _, sc := range copyScopes {
		if err := t.store.DeleteVariablesInScope(sc); err != nil {
			return err
		}
	}
	// A resumed store's loader (a GoMLX checkpoint.Handler) may still hold
	// copies no graph has loaded, which DeleteVariablesInScope does not
	// see and every later checkpoint would save again.
	if l := t.store.Loader(); l != nil {
		for _, v := range src {
			for _, sc := range copyScopes {
				if err := l.DeleteVariable(t.store, sc+v.Path()); err != nil {
					return fmt.Errorf("salsagomlx: step %d: releasing the copies: %w", res.Step, err)
				}
			}
		}
	}
	return nil
}

// hasCopy reports whether the store holds a copy of every variable of src
// under scope.
func (t *Trainer) hasCopy(src []*model.Variable, scope string) bool {
	for _, v := range src {
		if c := t.store.GetVariable(scope + v.Path()); c == nil || !c.Shape().Equal(v.Shape()) {
			return false
		}
	}
	return len(src) > 0
}

// copyInto copies, for each variable v of src, the value at path
// from+v.Path() into the variable at to+v.Path(); an empty from or to is v
// itself. It creates the variables a copy needs (not trainable), and checks
// every variable it reads before it changes any.
func (t *Trainer) copyInto(src []*model.Variable, from, to string) error {
	vals := make([]*model.Variable, len(src))
	for i, v := range src {
		vals[i] = v
		if from == "" {
			continue
		}
		c := t.store.GetVariable(from + v.Path())
		if c == nil || !c.Shape().Equal(v.Shape()) {
			return fmt.Errorf("no copy of %s kept", v.Path())
		}
		vals[i] = c
	}
	for i, v := range src {
		c, err := clonedValue(vals[i])
		if err != nil {
			return fmt.Errorf("copying %s: %w", v.Path(), err)
		}
		if to == "" {
			if err := v.SetValue(c); err != nil {
				return err
			}
			continue
		}
		if dv := t.store.GetVariable(to + v.Path()); dv != nil {
			if err := dv.SetValue(c); err != nil {
				return err
			}
			continue
		}
		dv, err := t.store.CreateVariable(to+v.Path(), c)
		if err != nil {
			return err
		}
		dv.SetTrainable(false)
	}
	return nil
}

// clonedValue is a copy of v's value, which SetValue on another variable
// may own (and free).
func clonedValue(v *model.Variable) (*tensors.Tensor, error) {
	val, err := v.Value()
	if err != nil {
		return nil, err
	}
	return val.Clone()
}
