package direction

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// dirCase is one row of the table that every Direction passes.
type dirCase struct {
	name  string
	l2    float64 // weight decay added to g in place (0 if none)
	decWD float64 // decoupled weight decay added to d (AdamW)
	qhm   *QHMConfig
	adam  *AdamConfig
	// lrfree is one of *ScheduleFreeConfig, *ProdigyConfig,
	// *DAdaptSGDConfig, *DoGConfig (the LRAware directions).
	lrfree any
}

func dirCases() []dirCase {
	const wd = 1e-2
	q := func(b, nu float64) *QHMConfig { return &QHMConfig{Beta: b, Nu: nu, WeightDecay: wd} }
	adam, adamW := DefaultAdam(), DefaultAdam()
	adam.WeightDecay = wd
	adamW.WeightDecay, adamW.Decoupled = wd, true
	return append([]dirCase{
		{name: "SGD", l2: wd, qhm: q(0, 1)},
		{name: "SHB", l2: wd, qhm: q(0.9, 1)},
		{name: "Nesterov", l2: wd, qhm: q(0.9, 0.9)},
		{name: "QHM", l2: wd, qhm: q(0.9, 0.7)},
		{name: "Adam", l2: wd, adam: &adam},
		{name: "AdamW", decWD: wd, adam: &adamW},
	}, lrfreeCases(wd)...)
}

// lrfreeCases are the LRAware directions at their defaults, with weight
// decay: L2 for Schedule-Free SGD, D-Adaptation, DoG and one Prodigy row;
// decoupled (g left as is) for Schedule-Free AdamW and the default Prodigy.
func lrfreeCases(wd float64) []dirCase {
	sgd, adamw, paper := DefaultScheduleFreeSGD(), DefaultScheduleFreeAdamW(), DefaultScheduleFreeAdamW()
	sgd.WeightDecay, adamw.WeightDecay, paper.WeightDecay, paper.PaperBiasCorrection = wd, wd, wd, true
	sgdR := sgd
	sgdR.R = 1
	prod, prodL2 := DefaultProdigy(), DefaultProdigy()
	prod.WeightDecay, prod.D0 = wd, 0.1
	prodL2.WeightDecay, prodL2.Decoupled, prodL2.BiasCorrection, prodL2.SafeguardWarmup, prodL2.Beta1 = wd, false, true, true, 0
	prodL2.GrowthRate = 1.5
	da, dam := DefaultDAdaptSGD(), DefaultDAdaptSGD()
	da.WeightDecay, da.D0 = wd, 0.1
	dam.WeightDecay, dam.Momentum, dam.GrowthRate = wd, 0.9, 1.02
	dog := DefaultDoG()
	dog.WeightDecay = wd
	return []dirCase{
		{name: "ScheduleFreeSGD", l2: wd, lrfree: &sgd},
		{name: "ScheduleFreeSGD-r1", l2: wd, lrfree: &sgdR},
		{name: "ScheduleFreeAdamW", lrfree: &adamw},
		{name: "ScheduleFreeAdamW-paper", lrfree: &paper},
		{name: "Prodigy", lrfree: &prod},
		{name: "Prodigy-L2", l2: wd, lrfree: &prodL2},
		{name: "DAdaptSGD", l2: wd, lrfree: &da},
		{name: "DAdaptSGD-momentum", l2: wd, lrfree: &dam},
		{name: "DoG", l2: wd, lrfree: &dog},
	}
}

func newDir[T Float](c dirCase, n int) (Direction[T], error) {
	switch cfg := c.lrfree.(type) {
	case *ScheduleFreeConfig:
		return NewScheduleFree[T](*cfg, n)
	case *ProdigyConfig:
		return NewProdigy[T](*cfg, n)
	case *DAdaptSGDConfig:
		return NewDAdaptSGD[T](*cfg, n)
	case *DoGConfig:
		return NewDoG[T](*cfg, n)
	}
	if c.qhm != nil {
		return NewQHM[T](*c.qhm, n)
	}
	return NewAdam[T](*c.adam, n)
}

// zeroDir returns an unconfigured direction of the same kind, to restore into.
func zeroDir[T Float](c dirCase) Direction[T] {
	switch c.lrfree.(type) {
	case *ScheduleFreeConfig:
		return new(ScheduleFree[T])
	case *ProdigyConfig:
		return new(Prodigy[T])
	case *DAdaptSGDConfig:
		return new(DAdaptSGD[T])
	case *DoGConfig:
		return new(DoG[T])
	}
	if c.qhm != nil {
		return new(QHM[T])
	}
	return new(Adam[T])
}

func randVec[T Float](r *rand.Rand, n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(r.NormFloat64())
	}
	return v
}

// step runs dir on inputs (g, x) drawn from seed and returns d and the g
// that Compute left behind.
func step[T Float](t *testing.T, dir Direction[T], seed uint64) (d, g []T) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0))
	n := dir.Len()
	g, x := randVec[T](r, n), randVec[T](r, n)
	d = make([]T, n)
	if err := dir.Compute(d, g, x); err != nil {
		t.Fatal(err)
	}
	return d, g
}

// sameBits reports whether a and b hold the same bit patterns (NaN == NaN).
func sameBits[T Float](a, b []T) bool {
	return slices.EqualFunc(a, b, func(x, y T) bool {
		return math.Float64bits(float64(x)) == math.Float64bits(float64(y))
	})
}

func snapshot[T Float](t *testing.T, dir Direction[T]) []byte {
	t.Helper()
	b, err := dir.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDirections(t *testing.T) {
	for _, c := range dirCases() {
		t.Run(c.name+"/float32", func(t *testing.T) { testDirection[float32](t, c) })
		t.Run(c.name+"/float64", func(t *testing.T) { testDirection[float64](t, c) })
	}
}

func testDirection[T Float](t *testing.T, c dirCase) {
	const n = 17
	mk := func(t *testing.T) Direction[T] {
		dir, err := newDir[T](c, n)
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	stateful := c.name != "SGD"

	t.Run("Reset", func(t *testing.T) {
		a, fresh := mk(t), mk(t)
		for k := range 5 {
			step(t, a, uint64(k))
		}
		if stateful && bytes.Equal(snapshot(t, a), snapshot(t, fresh)) {
			t.Fatal("5 steps left the state equal to a fresh one")
		}
		a.Reset()
		if !bytes.Equal(snapshot(t, a), snapshot(t, fresh)) {
			t.Fatal("state after Reset differs from a fresh one")
		}
		da, _ := step(t, a, 100)
		df, _ := step(t, fresh, 100)
		if !sameBits(da, df) {
			t.Fatalf("after Reset d = %v, fresh d = %v", da, df)
		}
	})

	t.Run("Snapshot", func(t *testing.T) {
		a := mk(t)
		for k := range 5 {
			step(t, a, uint64(k))
		}
		b := zeroDir[T](c)
		if err := b.UnmarshalBinary(snapshot(t, a)); err != nil {
			t.Fatal(err)
		}
		if b.Len() != n {
			t.Fatalf("restored Len() = %d, want %d", b.Len(), n)
		}
		for k := range 5 {
			da, ga := step(t, a, uint64(10+k))
			db, gb := step(t, b, uint64(10+k))
			if !sameBits(da, db) || !sameBits(ga, gb) {
				t.Fatalf("step %d after restore: d = %v, want %v", k, db, da)
			}
		}
		if !bytes.Equal(snapshot(t, a), snapshot(t, b)) {
			t.Fatal("snapshots differ after 5 more steps")
		}
		// Corrupt snapshots are rejected and leave the target unchanged.
		good := snapshot(t, a)
		bad := map[string][]byte{
			"truncated": good[:len(good)-1],
			"trailing":  append(slices.Clone(good), 0),
			"magic":     append([]byte("XXXX"), good[4:]...),
			"version":   slices.Concat(good[:4], []byte{99}, good[5:]),
			"empty":     nil,
		}
		for what, data := range bad {
			if err := b.UnmarshalBinary(data); err == nil {
				t.Errorf("%s snapshot accepted", what)
			}
			if !bytes.Equal(snapshot(t, b), good) {
				t.Fatalf("rejected %s snapshot changed the state", what)
			}
		}
		// A huge count written over any 8 bytes is an error, not a panic
		// or an allocation of that size.
		for off := 0; off+8 <= len(good); off++ {
			for _, huge := range []uint64{1 << 62, 1 << 31} {
				data := binary.LittleEndian.AppendUint64(slices.Clone(good[:off]), huge)
				data = append(data, good[off+8:]...)
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("%d written at byte %d: UnmarshalBinary panicked: %v", huge, off, r)
						}
					}()
					_ = b.UnmarshalBinary(data)
				}()
				if err := b.UnmarshalBinary(good); err != nil {
					t.Fatal(err)
				}
			}
		}
		// A snapshot of the other element type is rejected.
		var other []byte
		if elemSize[T]() == 4 {
			o, _ := newDir[float64](c, n)
			other = snapshot(t, o)
		} else {
			o, _ := newDir[float32](c, n)
			other = snapshot(t, o)
		}
		if err := b.UnmarshalBinary(other); err == nil || !strings.Contains(err.Error(), "-byte elements") {
			t.Errorf("snapshot of the other float type: err = %v", err)
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		a := mk(t)
		step(t, a, 1)
		before := snapshot(t, a)
		r := rand.New(rand.NewPCG(7, 8))
		g, x, d := randVec[T](r, n), randVec[T](r, n), make([]T, n)
		nan, inf := T(math.NaN()), T(math.Inf(-1))
		type call struct {
			name      string
			d, g, x   []T
			nonFinite bool
			want      string
		}
		withAt := func(v []T, i int, val T) []T { w := slices.Clone(v); w[i] = val; return w }
		calls := []call{
			{"short d", d[:n-1], slices.Clone(g), x, false, "len(d) = 16, len(g) = 17, len(x) = 17: must all equal n = 17"},
			{"short g", d, slices.Clone(g[:n-1]), x[:n-1], false, "len(g) = 16"},
			{"long x", d, slices.Clone(g), append(slices.Clone(x), 1), false, "len(x) = 18"},
			{"NaN in g", d, withAt(g, 2, nan), x, true, "g[2] = NaN: must be finite"},
			{"Inf in g", d, withAt(g, 16, inf), x, true, "g[16] = -Inf: must be finite"},
			{"NaN in x", d, slices.Clone(g), withAt(x, 0, nan), true, "x[0] = NaN: must be finite"},
		}
		for _, cl := range calls {
			g0 := slices.Clone(cl.g)
			err := a.Compute(cl.d, cl.g, cl.x)
			if err == nil || !strings.Contains(err.Error(), cl.want) {
				t.Errorf("%s: err = %v, want it to contain %q", cl.name, err, cl.want)
			}
			if errors.Is(err, ErrNonFinite) != cl.nonFinite {
				t.Errorf("%s: errors.Is(err, ErrNonFinite) = %v", cl.name, !cl.nonFinite)
			}
			if !sameBits(cl.g, g0) {
				t.Errorf("%s: g changed", cl.name)
			}
			if !bytes.Equal(snapshot(t, a), before) {
				t.Fatalf("%s: state changed", cl.name)
			}
		}
	})

	t.Run("Alias", func(t *testing.T) {
		a, b := mk(t), mk(t)
		for k := range 3 {
			r := rand.New(rand.NewPCG(uint64(k), 1))
			g, x, d := randVec[T](r, n), randVec[T](r, n), make([]T, n)
			gb := slices.Clone(g)
			if err := a.Compute(d, g, x); err != nil {
				t.Fatal(err)
			}
			if err := b.Compute(gb, gb, x); err != nil { // d is g
				t.Fatal(err)
			}
			if !sameBits(d, gb) {
				t.Fatalf("step %d: Compute(g, g, x) = %v, Compute(d, g, x) = %v", k, gb, d)
			}
		}
	})

	t.Run("WeightDecay", func(t *testing.T) {
		a := mk(t)
		r := rand.New(rand.NewPCG(9, 10))
		g, x, d := randVec[T](r, n), randVec[T](r, n), make([]T, n)
		g0 := slices.Clone(g)
		if err := a.Compute(d, g, x); err != nil {
			t.Fatal(err)
		}
		wd := T(c.l2)
		for i := range g {
			want := g0[i]
			if c.l2 != 0 {
				want += T(wd * x[i])
			}
			if g[i] != want {
				t.Fatalf("g[%d] = %v after Compute, want g+wd·x = %v", i, g[i], want)
			}
		}
		if c.decWD == 0 {
			return
		}
		// AdamW: d is Adam's direction without weight decay plus wd·x.
		cfg := *c.adam
		cfg.WeightDecay = 0
		plain, _ := NewAdam[T](cfg, n)
		dp := make([]T, n)
		if err := plain.Compute(dp, slices.Clone(g0), x); err != nil {
			t.Fatal(err)
		}
		for i := range d {
			if want := dp[i] + T(T(c.decWD)*x[i]); d[i] != want {
				t.Fatalf("AdamW d[%d] = %v, want %v", i, d[i], want)
			}
		}
	})
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  QHMConfig
		want string
	}{
		{QHMConfig{Beta: 1}, "direction: QHMConfig.Beta = 1: must be in [0, 1)"},
		{QHMConfig{Beta: -0.1}, "direction: QHMConfig.Beta = -0.1: must be in [0, 1)"},
		{QHMConfig{Beta: math.NaN()}, "direction: QHMConfig.Beta = NaN: must be in [0, 1)"},
		{QHMConfig{Nu: 1.5}, "direction: QHMConfig.Nu = 1.5: must be in [0, 1]"},
		{QHMConfig{WeightDecay: -1}, "direction: QHMConfig.WeightDecay = -1: must be in [0, +Inf)"},
		{QHMConfig{WeightDecay: math.Inf(1)}, "direction: QHMConfig.WeightDecay = +Inf: must be in [0, +Inf)"},
	} {
		if _, err := NewQHM[float64](tc.cfg, 3); err == nil || err.Error() != tc.want {
			t.Errorf("NewQHM(%+v): err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	for _, tc := range []struct {
		mod  func(*AdamConfig)
		want string
	}{
		{func(c *AdamConfig) { c.Beta1 = 1 }, "direction: AdamConfig.Beta1 = 1: must be in [0, 1)"},
		{func(c *AdamConfig) { c.Beta2 = 2 }, "direction: AdamConfig.Beta2 = 2: must be in [0, 1)"},
		{func(c *AdamConfig) { c.Eps = 0 }, "direction: AdamConfig.Eps = 0: must be in (0, +Inf)"},
		{func(c *AdamConfig) { c.WeightDecay = math.NaN() }, "direction: AdamConfig.WeightDecay = NaN: must be in [0, +Inf)"},
	} {
		cfg := DefaultAdam()
		tc.mod(&cfg)
		if _, err := NewAdam[float32](cfg, 3); err == nil || err.Error() != tc.want {
			t.Errorf("NewAdam(%+v): err = %v, want %q", cfg, err, tc.want)
		}
	}
	if _, err := NewQHM[float64](QHMConfig{}, -1); err == nil || err.Error() != "direction: n = -1: must be >= 0" {
		t.Errorf("NewQHM(n = -1): err = %v", err)
	}
}

func TestHelpers(t *testing.T) {
	// float32 products are exact in float64, so Dot of float32 data equals the
	// float64 sum of the converted values.
	a32 := []float32{0.1, -3, 1e-7, 2.5}
	b32 := []float32{7, 0.3, 1e7, -0.25}
	want := 0.0
	for i := range a32 {
		want += float64(a32[i]) * float64(b32[i])
	}
	if got := Dot(a32, b32); got != want {
		t.Errorf("Dot float32 = %v, want %v", got, want)
	}
	// Index order matters in float64: (1e16 + 1) + 1 − 1e16 = 0 (1 is lost
	// twice), unlike the exact sum 2.
	if got := Dot([]float64{1e16, 1, 1, -1e16}, []float64{1, 1, 1, 1}); got != 0 {
		t.Errorf("Dot in index order = %v, want 0", got)
	}
	x := []float32{1, 2}
	Update(x, []float32{0.5, -1}, 0.1)
	// float32(0.1)·0.5 and float32(0.1)·(−1), rounded to float32, subtracted.
	if x[0] != 1-float32(0.1)*0.5 || x[1] != 2+float32(0.1) {
		t.Errorf("Update = %v", x)
	}
	for _, v := range [][]float64{{0, math.NaN()}, {math.Inf(1)}, {1, math.Inf(-1)}} {
		if !HasNonFinite(v) {
			t.Errorf("HasNonFinite(%v) = false", v)
		}
	}
	// Every position, in the 4-wide blocks and in the tail, and the first of two.
	for i := range 9 {
		v := make([]float64, 9)
		v[i] = math.NaN()
		v[8] = math.Inf(1)
		if got := firstNonFinite(v); got != i {
			t.Errorf("firstNonFinite with NaN at %d = %d", i, got)
		}
	}
	if HasNonFinite([]float32{0, -1, math.MaxFloat32, math.SmallestNonzeroFloat32, -math.MaxFloat32}) {
		t.Error("HasNonFinite of finite values = true")
	}
}
