// Package salsa is the root of a Go implementation of "Statistical Adaptive
// Stochastic Gradient Methods" (Zhang, Lang, Liu, Xiao, 2020): SALSA, SASA+,
// SSLS and the baselines the paper compares them with.
//
// The core has no ML framework in its import graph (standard library and gonum
// only) and is laid out by layer:
//
//   - [github.com/salsaopt/salsa/stats]: the statistics of §2.2 and appendix A
//     (the leaky-bucket window, i.i.d./BM/OLBM variance estimators, the
//     confidence-interval test, the SLOPE test and SASA's equivalence test), as
//     free functions on []float64;
//   - [github.com/salsaopt/salsa/direction]: the QHM family of search
//     directions (eq. d-qhm) and Adam, on flat []float32 and []float64;
//   - [github.com/salsaopt/salsa/schedule]: learning-rate schedulers as state
//     machines driven by per-step scalars, with SSLS's line search by reverse
//     communication;
//   - [github.com/salsaopt/salsa/trace]: the trace and events CSV formats of
//     the conformance suite.
//
// Adapters to ML frameworks and the command-line tool live in their own module
// (github.com/salsaopt/salsa/gomlx) so that importing the core never pulls a
// framework or a newer toolchain.
package salsa
