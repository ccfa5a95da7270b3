package models

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
)

// LSTMConfig configures an LSTM language model.
type LSTMConfig struct {
	Vocab   int // tokens
	Embed   int // embedding width; must equal Hidden when Tied
	Hidden  int // units per layer
	Layers  int
	Dropout float64 // on the embedding output, between layers and on the last layer's output (PyTorch word_language_model style)
	Tied    bool    // decoder weight = embedding matrix (plus its own bias)
}

// LSTM is a word- or character-level LSTM language model in the style of
// PyTorch's word_language_model: embedding, dropout, a stack of LSTM layers
// with dropout between them, dropout, and a linear decoder to the vocabulary,
// optionally tied to the embedding.
//
// Its variables, under the scope given to [LSTM.Forward], follow PyTorch's
// names and layouts:
//
//	embedding/weight   [Vocab, Embed]        U(−0.1, 0.1)
//	lstm_l{k}/weight_ih [4·Hidden, in]       U(−1/√Hidden, 1/√Hidden), in = Embed for k = 0, else Hidden
//	lstm_l{k}/weight_hh [4·Hidden, Hidden]   U(−1/√Hidden, 1/√Hidden)
//	lstm_l{k}/bias_ih   [4·Hidden]           U(−1/√Hidden, 1/√Hidden)
//	lstm_l{k}/bias_hh   [4·Hidden]           U(−1/√Hidden, 1/√Hidden)
//	decoder/weight     [Vocab, Hidden]       U(−0.1, 0.1), absent when Tied
//	decoder/bias       [Vocab]               0
//
// The gate blocks along the 4·Hidden axis are in nn.LSTM's order i, f, g, o,
// with i = σ(·), f = σ(·), g = tanh(·), o = σ(·), c' = f⊙c + i⊙g,
// h' = o⊙tanh(c'). Both biases are kept, as in PyTorch (their sum enters the
// gates). All initial values are drawn from the store's RNG: seed it with
// [model.Store.SetRNGStateFromSeed] before the first graph is built and run
// for a reproducible initialization.
type LSTM struct {
	cfg LSTMConfig
	// plainGrad builds the layers without custom gradients, for tests and
	// benchmarks to compare against.
	plainGrad bool
}

// CharLSTM is the `lstm` model: embedding 256, 2 layers × 256, dropout 0.2,
// tied decoder. It panics if vocab < 1.
func CharLSTM(vocab int) *LSTM {
	return lstmMust(LSTMConfig{Vocab: vocab, Embed: 256, Hidden: 256, Layers: 2, Dropout: 0.2, Tied: true})
}

// PaperLSTM is the `lstm-paper` model, PyTorch word_language_model's "large"
// configuration used in the paper for WikiText-2: embedding 1500, 2 layers ×
// 1500, dropout 0.65, tied decoder. It panics if vocab < 1.
func PaperLSTM(vocab int) *LSTM {
	return lstmMust(LSTMConfig{Vocab: vocab, Embed: 1500, Hidden: 1500, Layers: 2, Dropout: 0.65, Tied: true})
}

func lstmMust(cfg LSTMConfig) *LSTM {
	m, err := NewLSTM(cfg)
	if err != nil {
		panic(err)
	}
	return m
}

// lstmMaxDim bounds every size so that products such as 4·Hidden·Embed stay
// far from overflowing an int.
const lstmMaxDim = 1 << 24

// NewLSTM validates cfg and returns the model.
func NewLSTM(cfg LSTMConfig) (*LSTM, error) {
	check := func(name string, v int) error {
		if v < 1 || v > lstmMaxDim {
			return fmt.Errorf("models: LSTMConfig.%s = %d: must be in [1, %d]", name, v, lstmMaxDim)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Vocab", cfg.Vocab}, {"Embed", cfg.Embed}, {"Hidden", cfg.Hidden}} {
		if err := check(f.name, f.v); err != nil {
			return nil, err
		}
	}
	if cfg.Layers < 1 || cfg.Layers > 64 {
		return nil, fmt.Errorf("models: LSTMConfig.Layers = %d: must be in [1, 64]", cfg.Layers)
	}
	if !(cfg.Dropout >= 0 && cfg.Dropout < 1) {
		return nil, fmt.Errorf("models: LSTMConfig.Dropout = %v: must be in [0, 1)", cfg.Dropout)
	}
	if cfg.Tied && cfg.Embed != cfg.Hidden {
		return nil, fmt.Errorf("models: LSTMConfig.Embed = %d: must equal Hidden = %d when Tied", cfg.Embed, cfg.Hidden)
	}
	return &LSTM{cfg: cfg}, nil
}

// Config returns the model's configuration.
func (m *LSTM) Config() LSTMConfig { return m.cfg }

// StateShape is the shape of the carried state for a batch of B sequences:
// [2, Layers, B, Hidden] float32, index 0 of the first axis is h, 1 is c.
func (m *LSTM) StateShape(batch int) shapes.Shape {
	return shapes.Make(dtypes.Float32, 2, m.cfg.Layers, batch, m.cfg.Hidden)
}

// NumParams is the number of trainable scalars, as PyTorch counts them for
// the same model: V·E + Σ_k 4H·(in_k + H + 2) + (V·H unless Tied) + V.
func (m *LSTM) NumParams() int {
	c := m.cfg
	n := c.Vocab * c.Embed
	for k := range c.Layers {
		in := c.Embed
		if k > 0 {
			in = c.Hidden
		}
		n += 4 * c.Hidden * (in + c.Hidden + 2)
	}
	if !c.Tied {
		n += c.Vocab * c.Hidden
	}
	return n + c.Vocab
}

// Forward returns the logits [B, T, Vocab] for the int32 tokens [B, T] and
// the state after the last step, from the carried state (shape
// StateShape(B), float32; zeros at the start of an epoch). The incoming state
// is detached (StopGradient): truncated BPTT. Dropout is active only when
// scope.IsTraining, with its masks drawn from the store's RNG.
//
// The graph is the recurrence unrolled over T. Per layer, the input
// projection of all T steps is one matmul [T·B, in]×[in, 4H]; per step there
// is one matmul [B, H]×[H, 4H] for the four gates. The backward pass is
// shaped by custom gradients (see lstmTape): the gradient of the input
// projection is assembled from the per-step gate gradients instead of from T
// zero-padded slices, the gradient of weight_hh is one matmul over all steps
// instead of T small ones, and weight gradients avoid the backend's
// transposes of both operands (lstmDense). The per-step product with
// weight_hh reads it transposed once per call, [H, 4H], a layout the Go
// backend packs much faster: with batches of 16 and more, a forward pass (a
// line-search trial, an evaluation) costs about a fifth less. The gradient
// to the previous h uses weight_hh as stored. Per-step slices are Gathers of
// contiguous rows (a memmove each on the Go backend). The custom gradients
// are assembled while Gradient runs: call it after Forward, on a loss that
// depends on the last step's output (any loss of the logits does); several
// Gradient calls on one graph are fine.
func (m *LSTM) Forward(scope *model.Scope, tokens, state *Node) (logits, next *Node) {
	c := m.cfg
	g := tokens.Graph()
	if tokens.Rank() != 2 {
		panic(fmt.Errorf("models: LSTM tokens shape %s: must be [batch, time]", tokens.Shape()))
	}
	b, t := tokens.Shape().Dim(0), tokens.Shape().Dim(1)
	if want := m.StateShape(b); !state.Shape().Equal(want) {
		panic(fmt.Errorf("models: LSTM state shape %s: must be %s", state.Shape(), want))
	}
	if tokens.DType() != dtypes.Int32 {
		tokens = ConvertDType(tokens, dtypes.Int32)
	}
	state = StopGradient(state)
	training := scope.IsTraining(g)
	f32 := dtypes.Float32

	embScope := scope.In("embedding").WithInitializer(initializer.RandomUniformFn(scope, -0.1, 0.1))
	emb := embScope.VariableWithShape("weight", shapes.Make(f32, c.Vocab, c.Embed)).NodeValue(g)

	// Time-major from here on: row t·B + j is sequence j at step t, so that
	// a step's slice is contiguous.
	x := Gather(emb, InsertAxes(Transpose(tokens, 0, 1), -1)) // [T, B, E]
	x = Reshape(x, t*b, c.Embed)
	x = m.dropout(scope, training, x)

	hs, cs := make([]*Node, c.Layers), make([]*Node, c.Layers)
	for k := range c.Layers {
		in := c.Embed
		if k > 0 {
			in = c.Hidden
		}
		bound := 1 / math.Sqrt(float64(c.Hidden))
		ls := scope.In("lstm_l%d", k).WithInitializer(initializer.RandomUniformFn(scope, -bound, bound))
		wih := ls.VariableWithShape("weight_ih", shapes.Make(f32, 4*c.Hidden, in)).NodeValue(g)
		whh := ls.VariableWithShape("weight_hh", shapes.Make(f32, 4*c.Hidden, c.Hidden)).NodeValue(g)
		bih := ls.VariableWithShape("bias_ih", shapes.Make(f32, 4*c.Hidden)).NodeValue(g)
		bhh := ls.VariableWithShape("bias_hh", shapes.Make(f32, 4*c.Hidden)).NodeValue(g)
		h0 := Reshape(Slice(state, AxisElem(0), AxisElem(k)), b, c.Hidden)
		c0 := Reshape(Slice(state, AxisElem(1), AxisElem(k)), b, c.Hidden)
		last := k == c.Layers-1
		x, hs[k], cs[k] = lstmLayer(x, wih, whh, Add(bih, bhh), h0, c0, t, last, !m.plainGrad)
		x = m.dropout(scope, training, x)
	}
	// x is batch-major [B·T, H] after the last layer.

	ds := scope.In("decoder")
	dec := emb
	if !c.Tied {
		dec = ds.WithInitializer(initializer.RandomUniformFn(scope, -0.1, 0.1)).
			VariableWithShape("weight", shapes.Make(f32, c.Vocab, c.Hidden)).NodeValue(g)
	}
	bias := ds.WithInitializer(initializer.Zero).VariableWithShape("bias", shapes.Make(f32, c.Vocab)).NodeValue(g)
	logits = Add(lstmDense(x, dec, !m.plainGrad), InsertAxes(bias, 0))
	logits = Reshape(logits, b, t, c.Vocab)
	next = Stack([]*Node{Stack(hs, 0), Stack(cs, 0)}, 0)
	return logits, next
}

// dropout zeroes each element with probability p and scales the others by
// 1/(1−p), in training mode only, with the mask from the store's RNG.
func (m *LSTM) dropout(scope *model.Scope, training bool, x *Node) *Node {
	p := m.cfg.Dropout
	if !training || p == 0 {
		return x
	}
	g := x.Graph()
	u := scope.RandomUniform(g, x.Shape())
	keep := Scalar(g, x.DType(), 1/(1-p))
	mask := Where(LessThan(u, Scalar(g, x.DType(), p)), ZerosLike(keep), keep)
	return Mul(x, mask)
}

// lstmTape collects, while the gradient graph is built, the gradients of one
// layer's gate pre-activations, and builds from them the gradients of the
// input projection and of weight_hh.
//
// It relies on GoMLX's reverse pass visiting nodes in decreasing creation
// order: the identity nodes carrying the custom gradients of the projection
// and of weight_hh are created before the steps, so their gradient functions
// run after every step's. The ordinary gradients that reach those identity
// nodes (T zero-padded slices, T small matmuls) are then unused, and the
// backend's dead-code elimination drops them.
type lstmTape struct {
	steps, batch int
	gates        [][4]*Node // per step, the gradients of the i, f, g, o pre-activations [B, H]
	dGates       []*Node    // per step, [B, 4H]
	hPrev        []*Node    // per step, the h entering it [B, H]
	cat          *Node      // [T·B, 4H], built once
}

func (tp *lstmTape) all() *Node {
	if tp.cat == nil {
		for t, d := range tp.dGates {
			if d == nil {
				panic(fmt.Errorf("models: LSTM gradient: no gradient reached step %d", t))
			}
		}
		tp.cat = Concatenate(tp.dGates, 0)
	}
	return tp.cat
}

// lstmLayer runs one layer over T steps of time-major x [T·B, in] from (h0,
// c0). It returns the outputs, time-major [T·B, H], or batch-major [B·T, H]
// when batchMajor, and the last h and c. With custom false it leaves the
// gradient to GoMLX's autodiff.
func lstmLayer(x, wih, whh, bias, h0, c0 *Node, steps int, batchMajor, custom bool) (out, hT, cT *Node) {
	b, hid := h0.Shape().Dim(0), h0.Shape().Dim(1)
	tp := &lstmTape{steps: steps, batch: b, gates: make([][4]*Node, steps),
		dGates: make([]*Node, steps), hPrev: make([]*Node, steps)}

	xp := Add(lstmDense(x, wih, custom), InsertAxes(bias, 0)) // [T·B, 4H]
	w := whh
	if custom {
		xp = IdentityWithCustomGradient(xp, func(_, _ *Node) *Node { return tp.all() })
		w = IdentityWithCustomGradient(whh, func(_, _ *Node) *Node {
			// dW_hh [4H, H] = Σ_t dGates_tᵀ·h_{t−1}, one contraction over T·B.
			return lstmWeightGrad(tp.all(), Concatenate(tp.hPrev, 0))
		})
	}
	xp = Reshape(xp, steps, b*4*hid)
	g := xp.Graph()
	// The per-step product h·W_hhᵀ reads W_hh transposed once, [H, 4H], the
	// contracted axis first: the Go backend (compute v0.1.14) packs that
	// layout of a matmul's right operand with its SIMD routine, and W_hh's own
	// [4H, H] with a generic loop, at every step. The outputs are the same
	// bit for bit for batches of 16 and more; below 16 the backend takes
	// another kernel, whose rounding differs between the two layouts.
	var wt *Node
	if custom {
		wt = Transpose(w, 0, 1)
	}

	h, cell := h0, c0
	hs := make([]*Node, steps)
	for t := range steps {
		tp.hPrev[t] = h
		var xpt, rec *Node // this step's rows of the projection, and h·W_hhᵀ
		if custom {
			// dh_{t−1} = dGates_t·W_hh: W_hh [4H, H] contracted on its
			// first axis, the fast layout, instead of GoMLX's gradient
			// through the transposed weight.
			hIn := IdentityWithCustomGradient(h, func(_, _ *Node) *Node {
				return DotGeneral(tp.dGates[t], []int{1}, nil, whh, []int{0}, nil)
			})
			// A Gather of contiguous rows is a memmove per row on the Go
			// backend; a Slice copies element by element. Its gradient (a
			// scatter) is replaced by the custom one and never runs.
			xpt = Gather(xp, Const(g, [][]int32{{int32(t)}}))
			rec = DotGeneral(hIn, []int{1}, nil, wt, []int{0}, nil)
		} else {
			xpt = Slice(xp, AxisElem(t))
			rec = DotGeneral(h, []int{1}, nil, w, []int{1}, nil)
		}
		gates := Add(Reshape(xpt, b, 4*hid), rec)
		var pre [4]*Node
		if !custom {
			for k := range pre {
				pre[k] = Slice(gates, AxisRange(), AxisRange(k*hid, (k+1)*hid))
			}
		} else {
			gates = IdentityWithCustomGradient(gates, func(_, _ *Node) *Node {
				// The gate gradients side by side, instead of the sum of four
				// zero-padded slices.
				parts := tp.gates[t][:]
				for k, p := range parts {
					if p == nil {
						parts[k] = Zeros(g, shapes.Make(gates.DType(), b, hid))
					}
				}
				tp.dGates[t] = Concatenate(parts, 1)
				if t == steps-1 {
					// The first step a reverse pass reaches: drop what a
					// previous Gradient call on this graph assembled.
					tp.cat = nil
				}
				return tp.dGates[t]
			})
			rows := Reshape(gates, 4*b, hid) // row 4j+k is gate k of sequence j
			for k := range pre {
				idx := make([][]int32, b)
				for j := range idx {
					idx[j] = []int32{int32(4*j + k)}
				}
				pre[k] = IdentityWithCustomGradient(Gather(rows, Const(g, idx)),
					func(_, v *Node) *Node {
						tp.gates[t][k] = v
						return v
					})
			}
		}
		i, f, gg, o := Logistic(pre[0]), Logistic(pre[1]), Tanh(pre[2]), Logistic(pre[3])
		cell = Add(Mul(f, cell), Mul(i, gg))
		h = Mul(o, Tanh(cell))
		hs[t] = h
	}
	if batchMajor {
		out = Reshape(Stack(hs, 1), b*steps, hid)
	} else {
		out = Concatenate(hs, 0)
	}
	return out, h, cell
}

// lstmDense is x·wᵀ for x [N, K] and w [M, K] (PyTorch's Linear layout).
// With custom, the gradient of w is built by lstmWeightGrad: GoMLX's own
// would have the backend transpose both operands, [N, M] and [N, K], to
// contract over N.
func lstmDense(x, w *Node, custom bool) *Node {
	if !custom {
		return DotGeneral(x, []int{1}, nil, w, []int{1}, nil)
	}
	var dy *Node
	wc := IdentityWithCustomGradient(w, func(_, v *Node) *Node {
		if dy == nil {
			return v
		}
		return lstmWeightGrad(dy, x)
	})
	y := DotGeneral(x, []int{1}, nil, wc, []int{1}, nil)
	return IdentityWithCustomGradient(y, func(_, v *Node) *Node {
		dy = v
		return v
	})
}

// lstmWeightGrad is dyᵀ·x [M, K] for dy [N, M] and x [N, K], a contraction
// over N. The Go backend's matmul wants the contracted axis last on the
// left, so one side is transposed explicitly: dy ([M, N], then the product
// is [M, K] directly) or x ([K, N], then the product [K, M] is transposed),
// whichever moves fewer elements.
func lstmWeightGrad(dy, x *Node) *Node {
	n, m, k := dy.Shape().Dim(0), dy.Shape().Dim(1), x.Shape().Dim(1)
	if m*n <= k*n+k*m {
		return DotGeneral(Transpose(dy, 0, 1), []int{1}, nil, x, []int{0}, nil)
	}
	return Transpose(DotGeneral(Transpose(x, 0, 1), []int{1}, nil, dy, []int{0}, nil), 0, 1)
}
