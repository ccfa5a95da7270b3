package schedtest

import "github.com/salsaopt/salsa/schedule"

// Script is a scheduler that sets the parameters' copy flags at steps a
// test chooses: the Result of step k is the inner scheduler's with Save,
// Confirm, Rollback, Release, KeepEarlier and RollbackEarlier taken from
// Flags[k] (a Rollback sets
// ResetMomentum too). It tests a caller's side of the protocol of package
// schedule (keep a candidate, confirm it, put back the kept copy) where a
// real schedule would need losses made to order. Its snapshot is the inner
// scheduler's: wrap the restored inner scheduler with the same Flags.
type Script struct {
	schedule.Scheduler
	Flags map[int]schedule.Result
}

// End closes the inner scheduler's step and sets the step's flags.
func (s *Script) End(obs schedule.Observation) (schedule.Result, error) {
	res, err := s.Scheduler.End(obs)
	if err != nil {
		return res, err
	}
	f := s.Flags[res.Step]
	res.Save, res.Confirm, res.Rollback, res.Release = f.Save, f.Confirm, f.Rollback, f.Release
	res.KeepEarlier, res.RollbackEarlier = f.KeepEarlier, f.RollbackEarlier
	res.ResetMomentum = res.ResetMomentum || f.Rollback
	return res, nil
}
