//go:build goexperiment.simd && amd64

package linear

import "simd/archsimd"

var (
	hasAVX512 = archsimd.X86.AVX512()
	hasAVX2   = archsimd.X86.AVX2() && archsimd.X86.FMA()
)

// dot returns Σ a_i·b_i over len(a) elements; len(b) ≥ len(a).
func dot(a, b []float32) float32 {
	switch {
	case hasAVX512:
		return dot16(a, b)
	case hasAVX2:
		return dot8(a, b)
	}
	return dotGeneric(a, b)
}

// axpy makes y += alpha·x over len(x) elements.
func axpy(alpha float32, x, y []float32) {
	switch {
	case hasAVX512:
		axpy16(alpha, x, y)
	case hasAVX2:
		axpy8(alpha, x, y)
	default:
		axpyGeneric(alpha, x, y)
	}
}

func dot16(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var acc0, acc1 archsimd.Float32x16
	i := 0
	for ; i+32 <= n; i += 32 {
		acc0 = archsimd.LoadFloat32x16(a[i:]).MulAdd(archsimd.LoadFloat32x16(b[i:]), acc0)
		acc1 = archsimd.LoadFloat32x16(a[i+16:]).MulAdd(archsimd.LoadFloat32x16(b[i+16:]), acc1)
	}
	if i+16 <= n {
		acc0 = archsimd.LoadFloat32x16(a[i:]).MulAdd(archsimd.LoadFloat32x16(b[i:]), acc0)
		i += 16
	}
	var lanes [16]float32
	acc0.Add(acc1).Store(lanes[:])
	archsimd.ClearAVXUpperBits()
	var s float32
	for _, v := range lanes {
		s += v
	}
	for ; i < n; i++ {
		s += a[i] * b[i]
	}
	return s
}

func axpy16(alpha float32, x, y []float32) {
	n := len(x)
	y = y[:n]
	al := archsimd.BroadcastFloat32x16(alpha)
	i := 0
	for ; i+16 <= n; i += 16 {
		archsimd.LoadFloat32x16(x[i:]).MulAdd(al, archsimd.LoadFloat32x16(y[i:])).Store(y[i:])
	}
	archsimd.ClearAVXUpperBits()
	for ; i < n; i++ {
		y[i] += alpha * x[i]
	}
}

func dot8(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var acc0, acc1 archsimd.Float32x8
	i := 0
	for ; i+16 <= n; i += 16 {
		acc0 = archsimd.LoadFloat32x8(a[i:]).MulAdd(archsimd.LoadFloat32x8(b[i:]), acc0)
		acc1 = archsimd.LoadFloat32x8(a[i+8:]).MulAdd(archsimd.LoadFloat32x8(b[i+8:]), acc1)
	}
	if i+8 <= n {
		acc0 = archsimd.LoadFloat32x8(a[i:]).MulAdd(archsimd.LoadFloat32x8(b[i:]), acc0)
		i += 8
	}
	var lanes [8]float32
	acc0.Add(acc1).Store(lanes[:])
	archsimd.ClearAVXUpperBits()
	var s float32
	for _, v := range lanes {
		s += v
	}
	for ; i < n; i++ {
		s += a[i] * b[i]
	}
	return s
}

func axpy8(alpha float32, x, y []float32) {
	n := len(x)
	y = y[:n]
	al := archsimd.BroadcastFloat32x8(alpha)
	i := 0
	for ; i+8 <= n; i += 8 {
		archsimd.LoadFloat32x8(x[i:]).MulAdd(al, archsimd.LoadFloat32x8(y[i:])).Store(y[i:])
	}
	archsimd.ClearAVXUpperBits()
	for ; i < n; i++ {
		y[i] += alpha * x[i]
	}
}

// dot4 returns ⟨x, w_r⟩ for four rows w0..w3, loading x once.
func dot4(x, w0, w1, w2, w3 []float32) (s0, s1, s2, s3 float32) {
	if !hasAVX512 {
		return dot(x, w0), dot(x, w1), dot(x, w2), dot(x, w3)
	}
	n := len(x)
	w0, w1, w2, w3 = w0[:n], w1[:n], w2[:n], w3[:n]
	var a0, a1, a2, a3 archsimd.Float32x16
	i := 0
	for ; i+16 <= n; i += 16 {
		xv := archsimd.LoadFloat32x16(x[i:])
		a0 = xv.MulAdd(archsimd.LoadFloat32x16(w0[i:]), a0)
		a1 = xv.MulAdd(archsimd.LoadFloat32x16(w1[i:]), a1)
		a2 = xv.MulAdd(archsimd.LoadFloat32x16(w2[i:]), a2)
		a3 = xv.MulAdd(archsimd.LoadFloat32x16(w3[i:]), a3)
	}
	var l [4][16]float32
	a0.Store(l[0][:])
	a1.Store(l[1][:])
	a2.Store(l[2][:])
	a3.Store(l[3][:])
	archsimd.ClearAVXUpperBits()
	var s [4]float32
	for r := range l {
		for _, v := range l[r] {
			s[r] += v
		}
	}
	for ; i < n; i++ {
		s[0] += x[i] * w0[i]
		s[1] += x[i] * w1[i]
		s[2] += x[i] * w2[i]
		s[3] += x[i] * w3[i]
	}
	return s[0], s[1], s[2], s[3]
}

// axpy4 makes y += d0·x0 + d1·x1 + d2·x2 + d3·x3, loading and storing y once.
func axpy4(d0, d1, d2, d3 float32, x0, x1, x2, x3, y []float32) {
	if !hasAVX512 {
		axpy(d0, x0, y)
		axpy(d1, x1, y)
		axpy(d2, x2, y)
		axpy(d3, x3, y)
		return
	}
	n := len(y)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	b0, b1 := archsimd.BroadcastFloat32x16(d0), archsimd.BroadcastFloat32x16(d1)
	b2, b3 := archsimd.BroadcastFloat32x16(d2), archsimd.BroadcastFloat32x16(d3)
	i := 0
	for ; i+16 <= n; i += 16 {
		v := archsimd.LoadFloat32x16(y[i:])
		v = archsimd.LoadFloat32x16(x0[i:]).MulAdd(b0, v)
		v = archsimd.LoadFloat32x16(x1[i:]).MulAdd(b1, v)
		v = archsimd.LoadFloat32x16(x2[i:]).MulAdd(b2, v)
		v = archsimd.LoadFloat32x16(x3[i:]).MulAdd(b3, v)
		v.Store(y[i:])
	}
	archsimd.ClearAVXUpperBits()
	for ; i < n; i++ {
		y[i] += d0*x0[i] + d1*x1[i] + d2*x2[i] + d3*x3[i]
	}
}
