//go:build !(goexperiment.simd && amd64)

package linear

func dot(a, b []float32) float32         { return dotGeneric(a, b) }
func axpy(alpha float32, x, y []float32) { axpyGeneric(alpha, x, y) }

func dot4(x, w0, w1, w2, w3 []float32) (s0, s1, s2, s3 float32) {
	return dot(x, w0), dot(x, w1), dot(x, w2), dot(x, w3)
}

func axpy4(d0, d1, d2, d3 float32, x0, x1, x2, x3, y []float32) {
	axpy(d0, x0, y)
	axpy(d1, x1, y)
	axpy(d2, x2, y)
	axpy(d3, x3, y)
}
