//go:build goexperiment.simd

package linear

import "simd"

// dot returns Σ a_i·b_i over len(a) elements; len(b) ≥ len(a).
func dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var acc0, acc1 simd.Float32s
	w := acc0.Len()
	i := 0
	for ; i+2*w <= n; i += 2 * w {
		acc0 = simd.LoadFloat32s(a[i:]).MulAdd(simd.LoadFloat32s(b[i:]), acc0)
		acc1 = simd.LoadFloat32s(a[i+w:]).MulAdd(simd.LoadFloat32s(b[i+w:]), acc1)
	}
	for ; i+w <= n; i += w {
		acc0 = simd.LoadFloat32s(a[i:]).MulAdd(simd.LoadFloat32s(b[i:]), acc0)
	}
	var lanes [64]float32
	acc0.Add(acc1).Store(lanes[:])
	var s float32
	for _, v := range lanes[:w] {
		s += v
	}
	for ; i < n; i++ {
		s += a[i] * b[i]
	}
	return s
}

// axpy makes y += alpha·x over len(x) elements.
func axpy(alpha float32, x, y []float32) {
	n := len(x)
	y = y[:n]
	al := simd.BroadcastFloat32s(alpha)
	w := al.Len()
	i := 0
	for ; i+w <= n; i += w {
		simd.LoadFloat32s(x[i:]).MulAdd(al, simd.LoadFloat32s(y[i:])).Store(y[i:])
	}
	for ; i < n; i++ {
		y[i] += alpha * x[i]
	}
}
