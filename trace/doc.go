// Package trace reads and writes the file formats of the conformance suite
// (shared/conformance/README.md) byte for byte:
//
//   - *.trace.csv(.gz): one [Row] per optimizer step, header
//     `step,lr,loss,x1d,d2,eta` ([ReadTrace], [TraceWriter]), or this
//     package's `step,lr,loss,x1d,d2,eta,step_size` ([StepSizeHeader]) for
//     the runs of learning-rate-free and schedule-free methods, whose step
//     is partly their own, or `step,lr,loss,x1d,d2,eta,x2` ([X2Header]),
//     ‖x_{k+1}‖² at the steps a scheduler read it, for the runs with
//     salsa-probe's probe_norm_cap=1, so that they can be replayed;
//   - *.events.csv: one row per [schedule.Event], header `step,kind,details...`
//     ([ReadEvents], [WriteEvents], [EventWriter]);
//   - *.meta.json: the statopt constructor arguments and a summary of the
//     decisions ([ReadMeta]);
//   - manifest.csv: one line per run ([ReadManifest]).
//
// # Numbers
//
// Floats are written as Python's repr(float) writes them ([FormatFloat]), so a
// file read and written again is identical to the original. Readers accept
// what strconv.ParseFloat accepts in decimal (including "nan", "inf", "-inf"),
// but not hexadecimal floats, underscores or values beyond the float64 range.
// NaN and ±Inf are parsed, not rejected: the files only carry numbers, and the
// consumers (the schedulers) reject non-finite inputs with an error naming the
// step. Integers are plain decimal, booleans 0 or 1.
//
// Lines end in "\n"; a "\r\n" ending is accepted on input. Errors name the
// line (1-based, the header is line 1) and the column (1-based, with its name).
//
// # Events
//
// Each kind has its own column list after `step,kind`:
//
//	test:             mean,lower,upper,stationary,composite,count,mean1,mean2,std,dof
//	slope_test:       slope,prob,decreasing,count
//	drop:             new_lr
//	switch:           reason
//	equivalence_test: mean,lower,upper,margin,stationary,count,std,dof
//	val_check:        val_loss,best,bad
//	decay:            new_lr,reason
//	probe:            mean,prev,accept,count,new_lr,reason
//
// The first four are statopt's (the reference files); equivalence_test
// (SASA's test, Lang et al. 2019), val_check ([schedule.KindValidation]),
// decay and probe (the budget's decay and the rate probe of
// [schedule.Tail]) are this package's. A drop's [schedule.Event.Reason] is not written: the
// preceding test row says why, and the drop row stays exactly the reference's.
// Fields that a kind's row does not list are not stored and read back as zero. A reason may not contain a comma, a quote or a line break.
package trace
