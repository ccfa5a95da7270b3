package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// naiveBN is training-mode batch norm of x [m, c] and the batch mean and
// biased variance.
func naiveBN(x, scale, offset []float64, m, c int, eps float64) (y, mean, variance []float64) {
	mean, variance, y = make([]float64, c), make([]float64, c), make([]float64, m*c)
	for i := range m {
		for j := range c {
			mean[j] += x[i*c+j] / float64(m)
		}
	}
	for i := range m {
		for j := range c {
			d := x[i*c+j] - mean[j]
			variance[j] += d * d / float64(m)
		}
	}
	for i := range m {
		for j := range c {
			y[i*c+j] = (x[i*c+j]-mean[j])/math.Sqrt(variance[j]+eps)*scale[j] + offset[j]
		}
	}
	return y, mean, variance
}

func TestBatchNorm(t *testing.T) {
	const momentum, eps = 0.1, 1e-5
	r := rand.New(rand.NewPCG(7, 8))
	d := []int{3, 2, 3, 4} // m = 18 values per channel, c = 4
	m, c := 18, 4
	x := randSlice(r, prod(d))
	for i := range x {
		x[i] = 3*x[i] + float64(i%c) // channel-dependent mean
	}
	scale, offset := randSlice(r, c), randSlice(r, c)
	runMean, runVar := randSlice(r, c), randSlice(r, c)
	for i := range runVar {
		runVar[i] += 2
	}
	rr := randSlice(r, len(x))

	store := model.NewStore()
	for name, v := range map[string][]float64{"scale": scale, "offset": offset, "mean": runMean, "variance": runVar} {
		if _, err := store.CreateVariable("/bn/"+name, tensors.FromFlatDataAndDimensions(append([]float64(nil), v...), c)); err != nil {
			t.Fatal(err)
		}
	}
	train := func(s *model.Scope, xn, rn *Node) []*Node {
		g := xn.Graph()
		s.SetTraining(g, true)
		bn := s.In("bn")
		y := BatchNorm(bn, xn, momentum, eps)
		sv, ov := bn.GetVariable("scale"), bn.GetVariable("offset")
		if sv == nil || ov == nil {
			t.Fatal("variables bn/scale, bn/offset not found")
		}
		grads := Gradient(ReduceAllSum(Mul(y, rn)), xn, sv.NodeValue(g), ov.NodeValue(g))
		return append([]*Node{y}, grads...)
	}
	exec, err := model.NewExec(testBackend(), store, train)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Call(tensors.FromFlatDataAndDimensions(x, d...), tensors.FromFlatDataAndDimensions(rr, d...))
	if err != nil {
		t.Fatal(err)
	}
	got := func(i int) []float64 { return tensors.MustCopyFlatData[float64](outs[i]) }
	want, bm, bv := naiveBN(x, scale, offset, m, c, eps)
	assertClose(t, "y", got(0), want, 1e-12)
	f := func(xv, sv, ov []float64) float64 { y, _, _ := naiveBN(xv, sv, ov, m, c, eps); return dot(y, rr) }
	assertClose(t, "dx", got(1), fdGrad(x, func(v []float64) float64 { return f(v, scale, offset) }), 1e-6)
	assertClose(t, "dscale", got(2), fdGrad(scale, func(v []float64) float64 { return f(x, v, offset) }), 1e-6)
	assertClose(t, "doffset", got(3), fdGrad(offset, func(v []float64) float64 { return f(x, scale, v) }), 1e-6)

	// Running statistics, PyTorch-style with the unbiased variance.
	wantMean, wantVar := make([]float64, c), make([]float64, c)
	for j := range c {
		wantMean[j] = (1-momentum)*runMean[j] + momentum*bm[j]
		wantVar[j] = (1-momentum)*runVar[j] + momentum*bv[j]*float64(m)/float64(m-1)
	}
	value := func(name string) []float64 {
		return tensors.MustCopyFlatData[float64](store.GetVariable("/bn/" + name).MustValue())
	}
	assertClose(t, "running mean", value("mean"), wantMean, 1e-12)
	assertClose(t, "running variance", value("variance"), wantVar, 1e-12)
	if v := store.GetVariable("/bn/mean"); v.Trainable {
		t.Error("running mean is trainable")
	}
	if v := store.GetVariable("/bn/scale"); !v.Trainable {
		t.Error("scale is not trainable")
	}

	// Eval mode: running statistics, unchanged afterwards.
	meanBefore := value("mean")
	eval, err := model.NewExec(testBackend(), store, func(s *model.Scope, xn *Node) *Node {
		s.SetTraining(xn.Graph(), false)
		return BatchNorm(s.In("bn"), xn, momentum, eps)
	})
	if err != nil {
		t.Fatal(err)
	}
	yt, err := eval.Call(tensors.FromFlatDataAndDimensions(x, d...))
	if err != nil {
		t.Fatal(err)
	}
	wantEval := make([]float64, len(x))
	for i := range x {
		j := i % c
		wantEval[i] = (x[i]-wantMean[j])/math.Sqrt(wantVar[j]+eps)*scale[j] + offset[j]
	}
	assertClose(t, "eval y", tensors.MustCopyFlatData[float64](yt[0]), wantEval, 1e-12)
	assertClose(t, "running mean after eval", value("mean"), meanBefore, 0)
}

// TestBatchNormInit checks the initial values of a fresh BatchNorm's
// variables and its float32 output.
func TestBatchNormInit(t *testing.T) {
	store := model.NewStore()
	exec, err := model.NewExec(testBackend(), store, func(s *model.Scope, xn *Node) *Node {
		s.SetTraining(xn.Graph(), true)
		return BatchNorm(s.In("bn"), xn, 0.1, 1e-5)
	})
	if err != nil {
		t.Fatal(err)
	}
	x := tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	y, err := exec.Call(x)
	if err != nil {
		t.Fatal(err)
	}
	if !y[0].Shape().Equal(shapes.Make(dtypes.Float32, 3, 2)) {
		t.Fatalf("shape %s", y[0].Shape())
	}
	for name, want := range map[string][]float32{"scale": {1, 1}, "offset": {0, 0}, "mean": {0.3, 0.4}, "variance": {1.3, 1.3}} {
		got := tensors.MustCopyFlatData[float32](store.GetVariable("/bn/" + name).MustValue())
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-6 {
				t.Errorf("%s = %v, want %v", name, got, want)
				break
			}
		}
	}
}
