package synthetic

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salsaopt/salsa/internal/conformance"
)

func TestLoad(t *testing.T) {
	// Sizes from the conformance README table "Synthetic problems".
	want := map[string]struct{ n, b, p, c, params, epochs int }{
		"lsq":    {2000, 20, 20, 0, 21, 200},
		"logreg": {3000, 30, 10, 3, 33, 200},
		"mlp":    {2000, 25, 10, 3, 16*10 + 16 + 3*16 + 3, 250},
	}
	for _, name := range Names() {
		p := loadProblem(t, name)
		w := want[name]
		if p.N != w.n || p.B != w.b || p.Features != w.p || p.Classes != w.c || len(p.Init) != w.params || len(p.Order) != w.epochs {
			t.Errorf("%s: n=%d b=%d p=%d classes=%d params=%d epochs=%d: want %v",
				name, p.N, p.B, p.Features, p.Classes, len(p.Init), len(p.Order), w)
		}
		if len(p.X) != p.N*p.Features {
			t.Errorf("%s: len(X) = %d: want %d", name, len(p.X), p.N*p.Features)
		}
		off := 0
		for _, tn := range p.Tensors {
			if tn.Offset != off {
				t.Errorf("%s: tensor %s offset %d: want %d", name, tn.Name, tn.Offset, off)
			}
			off += tn.Len
		}
		// Step k uses epoch (k−1) div (n/b), batch (k−1) mod (n/b).
		spe := p.StepsPerEpoch()
		b, err := p.Batch(spe + 2)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != p.Order[1][p.B] || len(b) != p.B {
			t.Errorf("%s: Batch(%d) = %v…: want perm_1[b:2b]", name, spe+2, b[:1])
		}
		for _, k := range []int{0, spe*len(p.Order) + 1} {
			if _, err := p.Batch(k); err == nil {
				t.Errorf("%s: Batch(%d): no error", name, k)
			}
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := filepath.Join(conformance.PublicDir(t), "problems")
	if _, err := Load(dir, "cnn"); err == nil || !strings.Contains(err.Error(), `"cnn"`) {
		t.Errorf("Load(cnn): err = %v: want one naming the problem", err)
	}
	if _, err := Load(t.TempDir(), "lsq"); err == nil {
		t.Error("Load from an empty directory: no error")
	}
}

// TestGradient checks every model's backward pass against central finite
// differences, at the initial weights and at a random point, on the batch of
// step 1 and on the full data.
func TestGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range Names() {
		p := loadProblem(t, name)
		batch, _ := p.Batch(1)
		all := make([]int, p.N)
		for i := range all {
			all[i] = i
		}
		x1 := append([]float64(nil), p.Init...)
		for i := range x1 {
			x1[i] += rng.NormFloat64()
		}
		for _, x := range [][]float64{p.Init, x1} {
			for _, rows := range [][]int{batch, all} {
				g := make([]float64, len(x))
				if _, err := p.LossGrad(x, rows, g); err != nil {
					t.Fatal(err)
				}
				xh := append([]float64(nil), x...)
				const h = 1e-6
				for i := range x {
					xh[i] = x[i] + h
					fp, _ := p.Loss(xh, rows)
					xh[i] = x[i] - h
					fm, _ := p.Loss(xh, rows)
					xh[i] = x[i]
					fd := (fp - fm) / (2 * h)
					if err := math.Abs(fd - g[i]); err > 1e-7*(1+math.Abs(g[i])) {
						t.Errorf("%s (%d rows): ∂f/∂x[%d] = %v, finite difference %v", name, len(rows), i, g[i], fd)
					}
				}
			}
		}
	}
}

// TestLossValue checks the forward pass against hand-derivable cases: at
// zero weights, least squares gives 0.5·mean(y²) and softmax cross-entropy
// gives log C.
func TestLossValue(t *testing.T) {
	for _, name := range Names() {
		p := loadProblem(t, name)
		rows, _ := p.Batch(1)
		zero := make([]float64, len(p.Init))
		f, err := p.Loss(zero, rows)
		if err != nil {
			t.Fatal(err)
		}
		want := math.Log(float64(p.Classes))
		if p.Classes == 0 {
			want = 0
			for _, i := range rows {
				want += p.Y[i] * p.Y[i]
			}
			want = 0.5 * want / float64(len(rows))
		}
		if math.Abs(f-want) > 1e-14*want {
			t.Errorf("%s: loss at 0 = %v: want %v", name, f, want)
		}
	}
}
