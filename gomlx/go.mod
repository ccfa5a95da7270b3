module github.com/salsaopt/salsa/gomlx

go 1.27

replace github.com/salsaopt/salsa => ../

require (
	github.com/gomlx/compute v0.1.13
	github.com/gomlx/gomlx v0.28.15
	github.com/salsaopt/salsa v0.0.0-00010101000000-000000000000
)

require (
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	golang.org/x/exp v0.0.0-20260908205506-85c1c2202aba // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
)
