package salsagomlx

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/schedule"
)

// keptScope holds the copy of the parameters that salsa-budget's rate probe
// asks to keep ([schedule.Result.Save]) and to put back
// ([schedule.Result.Rollback]), until it releases it
// ([schedule.Result.Release]): the variable at path p is kept at
// keptScope+p. It is in the trainer's snapshot and, being in the store, in
// a GoMLX checkpoint.
const keptScope = StateScope + "/kept"

// keptSources lists the variables a rollback puts back, in store order:
// every variable under /model (batch-norm running statistics included) and
// every other trainable variable outside the trainer's own scope.
func (t *Trainer) keptSources() []*model.Variable {
	var vs []*model.Variable
	for v := range t.store.IterVariables() {
		p := v.Path()
		if strings.HasPrefix(p, StateScope+"/") {
			continue
		}
		if strings.HasPrefix(p, "/model/") || v.Trainable {
			vs = append(vs, v)
		}
	}
	return vs
}

// keepOrRollback keeps a copy of the parameters when res asks for one and
// puts the copy back on a rollback; the caller then zeroes the momentum. On
// a release, after that, it deletes the copy, which no later snapshot then
// carries.
func (t *Trainer) keepOrRollback(res schedule.Result) error {
	if err := t.keepOrPutBack(res); err != nil || !res.Release {
		return err
	}
	return t.store.DeleteVariablesInScope(keptScope)
}

// keepOrPutBack is keepOrRollback's Save and Rollback. A Host direction's
// averages cannot be rolled back, so either is an error with it.
func (t *Trainer) keepOrPutBack(res schedule.Result) error {
	if !res.Save && !res.Rollback {
		return nil
	}
	if t.cfg.Direction == Host {
		return fmt.Errorf("salsagomlx: step %d: a rollback of the parameters with the Host direction: its own state "+
			"(the averages) cannot be rolled back", res.Step)
	}
	src := t.keptSources()
	if res.Save {
		for _, v := range src {
			c, err := clonedValue(v)
			if err != nil {
				return fmt.Errorf("salsagomlx: keeping %s: %w", v.Path(), err)
			}
			if kv := t.store.GetVariable(keptScope + v.Path()); kv != nil {
				if err := kv.SetValue(c); err != nil {
					return err
				}
				continue
			}
			kv, err := t.store.CreateVariable(keptScope+v.Path(), c)
			if err != nil {
				return err
			}
			kv.SetTrainable(false)
		}
		return nil
	}
	// Check every copy before changing anything.
	kept := make([]*model.Variable, len(src))
	for i, v := range src {
		kv := t.store.GetVariable(keptScope + v.Path())
		if kv == nil || !kv.Shape().Equal(v.Shape()) {
			return fmt.Errorf("salsagomlx: step %d: a rollback with no copy of %s kept", res.Step, v.Path())
		}
		kept[i] = kv
	}
	for i, v := range src {
		c, err := clonedValue(kept[i])
		if err != nil {
			return err
		}
		if err := v.SetValue(c); err != nil {
			return err
		}
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
