package salsagomlx

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"

	"github.com/salsaopt/salsa/gomlx/models"
)

// bnDropNet is dense → batch norm (batch statistics in training mode,
// running statistics updated by SetNodeValue, as ops.BatchNorm does) → ReLU
// → dropout 0.5 → dense, plus a regularization loss 0.01·‖W1‖² added with
// train.AddRegularizationLoss when reg is set.
func bnDropNet(reg bool) Model {
	return func(scope *model.Scope, x *Node) *Node {
		g := x.Graph()
		d1 := scope.In("d1")
		w1 := d1.VariableWithShape("weights", shapes.Make(x.DType(), x.Shape().Dim(1), 8))
		h := MatMul(x, w1.NodeValue(g))
		bn := scope.In("bn")
		mean := bn.WithInitializer(Zeros).VariableWithShape("mean", shapes.Make(h.DType(), 8)).SetTrainable(false)
		if bn.IsTraining(g) {
			mu := ReduceMean(h, 0)
			v := ReduceMean(Square(Sub(h, InsertAxes(mu, 0))), 0)
			mean.SetNodeValue(Add(MulScalar(mean.NodeValue(g), 0.9), MulScalar(mu, 0.1)))
			h = Div(Sub(h, InsertAxes(mu, 0)), InsertAxes(Sqrt(AddScalar(v, 1e-5)), 0))
		} else {
			h = Sub(h, InsertAxes(mean.NodeValue(g), 0))
		}
		h = layers.DropoutStatic(scope, Max(h, ZerosLike(h)), 0.5)
		if reg {
			train.AddRegularizationLoss(MulScalar(ReduceAllSum(Square(w1.NodeValue(g))), 0.01))
		}
		return layers.DenseWithBias(scope.In("d2"), h, 3)
	}
}

func varBytes(t *testing.T, v *model.Variable) []byte {
	t.Helper()
	val, err := v.Value()
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	if err := val.ConstBytes(func(d []byte) { b = append(b, d...) }); err != nil {
		t.Fatal(err)
	}
	return b
}

// storeBytes returns every variable's bytes but the scratch ones.
func storeBytes(t *testing.T, s *model.Store) map[string][]byte {
	m := map[string][]byte{}
	for v := range s.IterVariables() {
		if v.HasValue() {
			m[v.Path()] = varBytes(t, v)
		}
	}
	return m
}

// The line search sees one function of x: the trial at η = 0 is the loss of
// the gradient phase, with batch norm in training mode and dropout, and a
// trial changes no variable (running statistics, RNG, parameters).
func TestTrialAtZeroIsTheLoss(t *testing.T) {
	for _, reg := range []bool{false, true} {
		store := model.NewStore()
		if err := store.SetRNGStateFromSeed(7); err != nil {
			t.Fatal(err)
		}
		tr, err := New(gobackend.GetBackend(), store, bnDropNet(reg), Config{LR: 0.1, Beta: 0.9, Nu: 1, WeightDecay: 1e-2})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		for step := 0; step < 3; step++ {
			X, y := randBatch(r, 32, 5, 3)
			xt, yt := tensorsOf(X, y, 5)
			loss, _, err := tr.Grad(xt, yt)
			if err != nil {
				t.Fatal(err)
			}
			before := storeBytes(t, store)
			for _, eta := range []float64{0, 0.3, 0} {
				f, err := tr.Trial(xt, yt, eta)
				if err != nil {
					t.Fatal(err)
				}
				if eta == 0 && f != loss {
					t.Errorf("reg=%v step %d: trial at η=0 is %v, the loss %v", reg, step, f, loss)
				}
				if eta != 0 && f == loss {
					t.Errorf("reg=%v step %d: trial at η=%v equals the loss: the trial does not move x", reg, step, eta)
				}
			}
			after := storeBytes(t, store)
			for p, b := range before {
				if !bytes.Equal(b, after[p]) {
					t.Errorf("reg=%v step %d: a trial changed %s", reg, step, p)
				}
			}
			if _, _, err := tr.Update(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The loss includes the regularization losses of the model.
func TestRegularizationLossIncluded(t *testing.T) {
	losses := map[bool]float64{}
	for _, reg := range []bool{false, true} {
		store := model.NewStore()
		if err := store.SetRNGStateFromSeed(7); err != nil {
			t.Fatal(err)
		}
		tr, err := New(gobackend.GetBackend(), store, bnDropNet(reg), Config{LR: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		X, y := randBatch(rand.New(rand.NewPCG(1, 2)), 32, 5, 3)
		xt, yt := tensorsOf(X, y, 5)
		if losses[reg], _, err = tr.Grad(xt, yt); err != nil {
			t.Fatal(err)
		}
		if reg {
			v, err := store.GetVariable("/model/d1/weights").Value()
			if err != nil {
				t.Fatal(err)
			}
			var sq float64
			tensors.MustConstFlatData(v, func(f []float32) {
				for _, x := range f {
					sq += float64(x) * float64(x)
				}
			})
			if d := losses[true] - losses[false]; !near(d, 0.01*sq, 1e-4) {
				t.Errorf("loss with the regularization − without = %v, want 0.01·‖W1‖² = %v", d, 0.01*sq)
			}
		}
	}
}

// tinyRNN is a recurrent model: h_t = tanh(E[x_t] + h_{t−1}·U), dropout 0.3
// on h_t, logits h_t·V; its state is h, [batch, 6].
type tinyRNN struct{}

func (tinyRNN) StateShape(batch int) shapes.Shape { return shapes.Make(dtypes.Float32, batch, 6) }

func (tinyRNN) Forward(scope *model.Scope, x, state *Node) (logits, next *Node) {
	g := x.Graph()
	e := scope.VariableWithShape("embed", shapes.Make(state.DType(), 5, 6)).NodeValue(g)
	u := scope.VariableWithShape("u", shapes.Make(state.DType(), 6, 6)).NodeValue(g)
	v := scope.VariableWithShape("v", shapes.Make(state.DType(), 6, 5)).NodeValue(g)
	h := StopGradient(state)
	var outs []*Node
	for i := 0; i < x.Shape().Dim(1); i++ {
		xi := Slice(x, AxisRange(), AxisElem(i))
		ei := Gather(e, Reshape(xi, -1, 1))
		h = Tanh(Add(ei, MatMul(h, u)))
		outs = append(outs, InsertAxes(layers.DropoutStatic(scope, h, 0.3), 1))
	}
	hs := Concatenate(outs, 1)
	return Einsum("bth,hv->btv", hs, v), h
}

func seqBatch(r *rand.Rand, b, T int) (*tensors.Tensor, *tensors.Tensor) {
	x := make([]int32, b*T)
	y := make([]int32, b*T)
	for i := range x {
		x[i] = int32(r.IntN(5))
		y[i] = (x[i] + 1) % 5
	}
	return tensors.FromFlatDataAndDimensions(x, b, T), tensors.FromFlatDataAndDimensions(y, b, T)
}

// A recurrent model: η = 0 is the loss (same dropout mask, same starting
// state), the state is carried from batch to batch, and a snapshot resumes
// bit for bit with dropout (the RNG state is in it).
func TestRecurrentTrialStateAndResume(t *testing.T) {
	newTr := func() *Trainer {
		store := model.NewStore()
		if err := store.SetRNGStateFromSeed(3); err != nil {
			t.Fatal(err)
		}
		tr, err := NewRecurrent(gobackend.GetBackend(), store, tinyRNN{}, Config{LR: 0.5, Beta: 0.9, Nu: 1, ClipNorm: 0.25})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	type batch struct{ x, y *tensors.Tensor }
	r := rand.New(rand.NewPCG(5, 6))
	var batches []batch
	for range 6 {
		x, y := seqBatch(r, 4, 7)
		batches = append(batches, batch{x, y})
	}
	step := func(tr *Trainer, k int) float64 {
		x, y := batches[k].x, batches[k].y
		loss, _, err := tr.Grad(x, y)
		if err != nil {
			t.Fatal(err)
		}
		f, err := tr.Trial(x, y, 0)
		if err != nil {
			t.Fatal(err)
		}
		if f != loss {
			t.Errorf("trial at η=0 is %v, the loss %v", f, loss)
		}
		if _, _, err := tr.Update(); err != nil {
			t.Fatal(err)
		}
		return loss
	}
	tr := newTr()
	for k := range 3 {
		step(tr, k)
	}
	st := varBytes(t, tr.store.GetVariable(statePath))
	if bytes.Equal(st, make([]byte, len(st))) {
		t.Fatal("the carried state is zero after 3 steps")
	}
	snap, err := tr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for k := 3; k < 6; k++ {
		want = append(want, step(tr, k))
	}
	tr2 := newTr()
	if err := tr2.store.SetRNGStateFromSeed(99); err != nil { // a different RNG: the snapshot must bring the right one
		t.Fatal(err)
	}
	if err := tr2.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if got := step(tr2, 3+i); got != want[i] {
			t.Errorf("resumed step %d: loss %v, want %v", i+1, got, want[i])
		}
	}
	if err := tr2.ResetState(); err != nil {
		t.Fatal(err)
	}
	st = varBytes(t, tr2.store.GetVariable(statePath))
	if !bytes.Equal(st, make([]byte, len(st))) {
		t.Error("ResetState left a non-zero state")
	}
}

// Evaluating a recurrent model chunk by chunk with the carried state is one
// evaluation of the whole sequence.
func TestEvaluateSequenceCarriesState(t *testing.T) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(3); err != nil {
		t.Fatal(err)
	}
	tr, err := NewRecurrent(gobackend.GetBackend(), store, tinyRNN{}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	x, y := seqBatch(rand.New(rand.NewPCG(1, 1)), 2, 8)
	z, _ := tr.ZeroState(2)
	whole, c1, n1, _, err := tr.EvaluateSequenceSums(x, y, z)
	if err != nil {
		t.Fatal(err)
	}
	half := func(tt *tensors.Tensor, lo int) *tensors.Tensor {
		out := make([]int32, 8)
		tensors.MustConstFlatData(tt, func(f []int32) {
			for b := 0; b < 2; b++ {
				copy(out[b*4:(b+1)*4], f[b*8+lo:b*8+lo+4])
			}
		})
		return tensors.FromFlatDataAndDimensions(out, 2, 4)
	}
	z, _ = tr.ZeroState(2)
	l1, ca, na, next, err := tr.EvaluateSequenceSums(half(x, 0), half(y, 0), z)
	if err != nil {
		t.Fatal(err)
	}
	l2, cb, nb, _, err := tr.EvaluateSequenceSums(half(x, 4), half(y, 4), next)
	if err != nil {
		t.Fatal(err)
	}
	if !near(l1+l2, whole, 1e-6) || ca+cb != c1 || na+nb != n1 || n1 != 16 {
		t.Errorf("chunks: loss %v correct %d n %d; whole: %v %d %d", l1+l2, ca+cb, na+nb, whole, c1, n1)
	}
}

// Labels of shape [n, 1], as GoMLX datasets give them, train like [n].
func TestLabelsWithTrailingAxis(t *testing.T) {
	var losses [2]float64
	for i, col := range []bool{false, true} {
		store := model.NewStore()
		tr, err := New(gobackend.GetBackend(), store, fixedLinear(make([]float32, 15), 5, 3), Config{LR: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		X, y := randBatch(rand.New(rand.NewPCG(1, 2)), 8, 5, 3)
		xt := tensors.FromFlatDataAndDimensions(X, 8, 5)
		yt := tensors.FromFlatDataAndDimensions(y, 8)
		if col {
			yt = tensors.FromFlatDataAndDimensions(y, 8, 1)
		}
		for range 2 {
			if losses[i], err = tr.Step(xt, yt); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := tr.Evaluate(xt, yt); err != nil {
			t.Fatal(err)
		}
	}
	if losses[0] != losses[1] {
		t.Errorf("labels [n,1]: loss %v, labels [n]: %v", losses[1], losses[0])
	}
}

// The η = 0 identity on the project's deep models: ResNet-20 (batch norm in
// training mode) and the character LSTM (dropout 0.2, carried state).
func TestTrialAtZeroDeepModels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ResNet-20 and the LSTM")
	}
	r := rand.New(rand.NewPCG(4, 4))
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(1); err != nil {
		t.Fatal(err)
	}
	res, err := New(gobackend.GetBackend(), store, models.ResNet20(3), Config{LR: 0.05, Beta: 0.9, Nu: 1, WeightDecay: 5e-4})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 8*8*8)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	y := []int32{0, 1, 2, 0, 1, 2, 0, 1}
	xt, yt := tensors.FromFlatDataAndDimensions(x, 8, 8, 8, 1), tensors.FromFlatDataAndDimensions(y, 8)
	store2 := model.NewStore()
	if err := store2.SetRNGStateFromSeed(1); err != nil {
		t.Fatal(err)
	}
	lstm, err := NewRecurrent(gobackend.GetBackend(), store2, models.CharLSTM(11), Config{LR: 0.5, Beta: 0.9, Nu: 1, ClipNorm: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	tx, ty := seqBatch(r, 3, 6)
	for _, c := range []struct {
		name string
		tr   *Trainer
		x, y *tensors.Tensor
	}{{"resnet20", res, xt, yt}, {"lstm", lstm, tx, ty}} {
		for step := 0; step < 2; step++ {
			loss, _, err := c.tr.Grad(c.x, c.y)
			if err != nil {
				t.Fatal(err)
			}
			before := storeBytes(t, c.tr.store)
			f, err := c.tr.Trial(c.x, c.y, 0)
			if err != nil {
				t.Fatal(err)
			}
			if f != loss {
				t.Errorf("%s step %d: trial at η=0 is %v, the loss %v", c.name, step, f, loss)
			}
			after := storeBytes(t, c.tr.store)
			for p, b := range before {
				if !bytes.Equal(b, after[p]) {
					t.Errorf("%s step %d: the trial changed %s", c.name, step, p)
				}
			}
			if _, _, err := c.tr.Update(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// With SearchAlongD the trial at η is the loss at the point the update at
// rate η reaches, x − η·d_k, and Grad returns ⟨g,d_k⟩; along g the same
// trial misses that point once momentum builds up.
func TestTrialAlongD(t *testing.T) {
	net := func(scope *model.Scope, x *Node) *Node {
		h := layers.DenseWithBias(scope.In("d1"), x, 8)
		return layers.DenseWithBias(scope.In("d2"), Max(h, ZerosLike(h)), 3)
	}
	const lr, beta, nu = 0.2, 0.9, 0.7
	for _, alongD := range []bool{true, false} {
		store := model.NewStore()
		if err := store.SetRNGStateFromSeed(3); err != nil {
			t.Fatal(err)
		}
		tr, err := New(gobackend.GetBackend(), store, net,
			Config{LR: lr, Beta: beta, Nu: nu, WeightDecay: 1e-2, SearchAlongD: alongD})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(4, 5))
		misses := 0
		for step := 0; step < 4; step++ {
			X, y := randBatch(r, 32, 5, 3)
			xt, yt := tensorsOf(X, y, 5)
			_, gs, err := tr.Grad(xt, yt)
			if err != nil {
				t.Fatal(err)
			}
			f, err := tr.Trial(xt, yt, lr)
			if err != nil {
				t.Fatal(err)
			}
			_, d2, err := tr.Update()
			if err != nil {
				t.Fatal(err)
			}
			if step == 0 && alongD {
				// h starts at 0: d = (1−ν)g + ν(1−β)g = a·g, so ⟨g,d⟩ = ‖d‖²/a.
				a := (1 - nu) + nu*(1-beta)
				if !near(gs, d2/a, 1e-5) {
					t.Errorf("step 0: Grad's ⟨g,d⟩ = %v, want ‖d‖²/%v = %v", gs, a, d2/a)
				}
			}
			after, _, err := tr.Grad(xt, yt) // the loss at x − lr·d on the same batch
			if err != nil {
				t.Fatal(err)
			}
			if !near(f, after, 1e-5) {
				misses++
				if alongD {
					t.Errorf("step %d: trial at η = α is %v, the loss after the update %v", step, f, after)
				}
			}
		}
		if !alongD && misses == 0 {
			t.Errorf("along g the trial matched the update's point at every step: the test cannot tell the directions apart")
		}
	}
}
