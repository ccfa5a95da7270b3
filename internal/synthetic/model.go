package synthetic

import (
	"fmt"
	"math"
)

// model is the forward and backward pass of one problem on the flat
// parameter vector. Products are converted to float64 before they are
// accumulated, so that the compiler never fuses them into an FMA and results
// are the same on every architecture.
type model interface {
	// check verifies the problem's data against the architecture.
	check(p *Problem) error
	// eval returns the mean loss over rows at w and, when grad is not nil,
	// overwrites grad with its gradient.
	eval(p *Problem, w []float64, rows []int, grad []float64) float64
}

// lsqModel is Linear(p→1) with bias; loss 0.5·mean((x·w + b − y)²).
type lsqModel struct{}

func (lsqModel) check(p *Problem) error {
	if p.Tensors[0].Shape[1] != p.Features {
		return fmt.Errorf("synthetic: %s: weight has %d inputs: data has %d features", p.Name, p.Tensors[0].Shape[1], p.Features)
	}
	return nil
}

func (lsqModel) eval(p *Problem, w []float64, rows []int, grad []float64) float64 {
	nf := p.Features
	wt, b := w[:nf], w[nf]
	inv := 1 / float64(len(rows))
	if grad != nil {
		clear(grad)
	}
	var sum float64
	for _, i := range rows {
		x := p.X[i*nf : (i+1)*nf]
		var s float64
		for j, v := range x {
			s += float64(wt[j] * v)
		}
		r := s + b - p.Y[i]
		sum += float64(r * r)
		if grad != nil {
			dr := r * inv // ∂/∂r of 0.5·r²/B
			gw := grad[:nf]
			for j, v := range x {
				gw[j] += float64(dr * v)
			}
			grad[nf] += dr
		}
	}
	return 0.5 * (sum * inv)
}

// logregModel is Linear(p→C) with bias; mean softmax cross-entropy.
type logregModel struct{}

func (logregModel) check(p *Problem) error {
	if sh := p.Tensors[0].Shape; sh[0] != p.Classes || sh[1] != p.Features {
		return fmt.Errorf("synthetic: %s: weight %v: must be %dx%d", p.Name, sh, p.Classes, p.Features)
	}
	return nil
}

func (logregModel) eval(p *Problem, w []float64, rows []int, grad []float64) float64 {
	nf, nc := p.Features, p.Classes
	W, b := w[:nc*nf], w[nc*nf:nc*nf+nc]
	var z [maxClasses]float64
	inv := 1 / float64(len(rows))
	if grad != nil {
		clear(grad)
	}
	var sum float64
	for _, i := range rows {
		x := p.X[i*nf : (i+1)*nf]
		linear(z[:nc], W, b, x)
		y := int(p.Y[i])
		sum -= logSoftmax(z[:nc])[y]
		if grad != nil {
			dz := softmaxGrad(z[:nc], y, inv)
			gW, gb := grad[:nc*nf], grad[nc*nf:nc*nf+nc]
			for c, g := range dz {
				row := gW[c*nf : (c+1)*nf]
				for j, v := range x {
					row[j] += float64(g * v)
				}
				gb[c] += g
			}
		}
	}
	return sum * inv
}

// mlpModel is Linear(p→H) → tanh → Linear(H→C); mean softmax cross-entropy.
type mlpModel struct{}

// maxClasses and maxHidden bound the stack buffers of the forward pass.
const (
	maxClasses = 8
	maxHidden  = 64
)

func (mlpModel) check(p *Problem) error {
	w1, w2 := p.Tensors[0].Shape, p.Tensors[2].Shape
	if w1[1] != p.Features || w2[0] != p.Classes || w2[1] != w1[0] || w1[0] > maxHidden {
		return fmt.Errorf("synthetic: %s: weights %v, %v: must be Hx%d, %dxH with H ≤ %d", p.Name, w1, w2, p.Features, p.Classes, maxHidden)
	}
	return nil
}

func (mlpModel) eval(p *Problem, w []float64, rows []int, grad []float64) float64 {
	nf, nc := p.Features, p.Classes
	nh := p.Tensors[0].Shape[0]
	t := p.Tensors
	W1, b1 := w[t[0].Offset:][:t[0].Len], w[t[1].Offset:][:t[1].Len]
	W2, b2 := w[t[2].Offset:][:t[2].Len], w[t[3].Offset:][:t[3].Len]
	var h, dh [maxHidden]float64
	var z [maxClasses]float64
	inv := 1 / float64(len(rows))
	if grad != nil {
		clear(grad)
	}
	var sum float64
	for _, i := range rows {
		x := p.X[i*nf : (i+1)*nf]
		linear(h[:nh], W1, b1, x)
		for k := range nh {
			h[k] = math.Tanh(h[k])
		}
		linear(z[:nc], W2, b2, h[:nh])
		y := int(p.Y[i])
		sum -= logSoftmax(z[:nc])[y]
		if grad == nil {
			continue
		}
		dz := softmaxGrad(z[:nc], y, inv)
		gW1, gb1 := grad[t[0].Offset:][:t[0].Len], grad[t[1].Offset:][:t[1].Len]
		gW2, gb2 := grad[t[2].Offset:][:t[2].Len], grad[t[3].Offset:][:t[3].Len]
		clear(dh[:nh])
		for c, g := range dz {
			row, grow := W2[c*nh:(c+1)*nh], gW2[c*nh:(c+1)*nh]
			for k := range nh {
				grow[k] += float64(g * h[k])
				dh[k] += float64(g * row[k])
			}
			gb2[c] += g
		}
		for k := range nh {
			a := dh[k] * (1 - float64(h[k]*h[k])) // tanh' = 1 − tanh²
			grow := gW1[k*nf : (k+1)*nf]
			for j, v := range x {
				grow[j] += float64(a * v)
			}
			gb1[k] += a
		}
	}
	return sum * inv
}

// linear writes z = W·x + b for W of shape len(z)×len(x), row-major.
func linear(z, W, b, x []float64) {
	n := len(x)
	for c := range z {
		row := W[c*n : (c+1)*n]
		var s float64
		for j, v := range x {
			s += float64(row[j] * v)
		}
		z[c] = s + b[c]
	}
}

// logSoftmax overwrites z with z − max − log Σ exp(z − max) and returns it.
func logSoftmax(z []float64) []float64 {
	m := z[0]
	for _, v := range z[1:] {
		m = max(m, v)
	}
	var s float64
	for _, v := range z {
		s += math.Exp(v - m)
	}
	ls := math.Log(s)
	for c, v := range z {
		z[c] = v - m - ls
	}
	return z
}

// softmaxGrad overwrites the log-probabilities lp with the gradient of the
// batch-mean cross-entropy with respect to the logits of one example:
// (softmax − onehot(y))·inv, formed as PyTorch's log_softmax backward does.
func softmaxGrad(lp []float64, y int, inv float64) []float64 {
	for c, v := range lp {
		lp[c] = math.Exp(v) * inv
	}
	lp[y] -= inv
	return lp
}
