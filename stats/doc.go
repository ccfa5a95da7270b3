// Package stats is the statistics core of SASA+ and SALSA (Zhang, Lang, Liu,
// Xiao 2020), written to match the authors' reference code (statopt 0.2)
// rule by rule.
//
//   - [Window] is statopt's leaky bucket: after n pushes it holds the most
//     recent N = ⌈θ·n⌉ samples (Algorithm 1, line "N ← ⌈θ(k−k_o)⌉").
//   - [Mean] and [Std] give μ̂_N and σ̂_N of §2.2 with the i.i.d., batch-means
//     (appendix A, eq. (22)) or overlapping-batch-means (eq. (23))
//     estimator. BM uses statopt's dof q−1, not the p−1 of appendix A; with
//     p = q = ⌊√N⌋ as the paper prescribes the two differ only when
//     ⌊N/q⌋ > q.
//   - [MeanInterval] is the (1−δ) confidence interval of E[Δ], eq.
//     (15); [Interval.Stationary] is SASA+'s test of Algorithm 1
//     (0 ∈ μ̂_N ± ω_N, appendix B.2 eq. (29)) with statopt's
//     sign and composite checks; [Interval.Equivalent] is SASA's equivalence
//     test (appendix B.1, eq. (27)).
//   - [SlopeTest] is the SLOPE test of §2.2 (eq. (16), appendix A
//     "Slope test for linear regression") in the form of statopt's linregress.
//   - [TQuantile] and [TCDF] are Student-t helpers on gonum's stat/distuv.
//
// # Errors
//
// NewWindow, NewWindowFromState, Window.Push, ParseVarianceMethod, Std,
// MeanInterval and SlopeTest validate their inputs and return an error that
// names the field, its value and the valid range: θ outside (0, 1], δ outside
// (0, 1), a window too short for the estimator, NaN or ±Inf samples, and sums
// that overflow. No function panics on bad input. Functions without an error
// result return NaN where the result is undefined (Mean of an empty slice,
// TQuantile or TCDF with dof < 1 or a NaN argument).
//
// # Accuracy
//
// TQuantile follows the exact Student-t quantile to ≤ 4e-13 relative for
// dof ≤ 1000. statopt's scipy 1.10 t.ppf is off by up to ~3e-11 relative at
// p = 0.975 (5e-9 at other p), so ω_N, Lower and Upper differ from statopt's
// traces by that much more than the mean and σ̂_N do.
package stats
