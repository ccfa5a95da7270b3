package trace_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/salsaopt/salsa/trace"
)

// Read the first steps of a SALSA trace (rows of logreg_salsa_lr1e-1) and
// form SASA+'s statistic Δ = x1d + d2·(lr/2), as statopt does (the printed
// Δ agree with Python's "%.6f" of the same expression).
func ExampleReadTrace() {
	const in = `step,lr,loss,x1d,d2,eta
1,0.11000000000000001,1.4076027397430544,0.04947082951278044,0.030825348145934406,0.2
801,28.092959346089767,0.7488363755150772,0.15160977567015427,0.003869710107458898,14.785768076889351
802,28.092959346089767,0.7851167106620394,0.1470755819816731,0.003582224998491833,
`
	rows, err := trace.ReadTrace(strings.NewReader(in))
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		delta := r.X1D + r.D2*(0.5*r.LR)
		search := "no line search"
		if r.HasEta {
			search = "eta = " + trace.FormatFloat(r.Eta)
		}
		fmt.Printf("step %d: lr = %s, Δ = %.6f, %s\n", r.Step, trace.FormatFloat(r.LR), delta, search)
	}
	// Output:
	// step 1: lr = 0.11000000000000001, Δ = 0.051166, eta = 0.2
	// step 801: lr = 28.092959346089767, Δ = 0.205966, eta = 14.785768076889351
	// step 802: lr = 28.092959346089767, Δ = 0.197393, no line search
}
