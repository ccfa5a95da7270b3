package direction

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// Reference trajectories of the learning-rate-free and Schedule-Free
// directions on the quadratic f(x) = ½ Σ h_i (x_i − c_i)², h = (1, 0.5, 2),
// c = (1, −2, 0.5), from x_0 = (0.3, −0.7, 1.2), with exact gradients and a
// rate α_k changed every step (lrFree for Prodigy, D-Adaptation and DoG,
// lrSFSGD and lrSFAdamW for Schedule-Free, as a warmup schedule would give).
//
// Source: the authors' reference PyTorch implementations, run once in
// float64 with torch 1.13 (/usr/bin/python3), α_k written to group['lr']
// before each step() (warmup_steps = 0): facebookresearch/schedule_free
// 70785b5 (sgd_schedulefree_reference.py, adamw_schedulefree_reference.py,
// adamw_schedulefree_paper.py), konstmish/prodigy 3efb213
// (prodigy_reference.py), facebookresearch/dadaptation c984980
// (dadapt_sgd.py), formll/dog 8d45cf5 (dog.py). Each row is the parameter
// vector after the step (for Schedule-Free: y, then the evaluation point x,
// state['x'] or, for the paper form, which stores only y and z,
// (y − (1−β)z)/β). The project never runs Python: the numbers are written
// here.
//
// The equations these implement are those of the papers' algorithm boxes
// as the type comments restate them: Schedule-Free SGD and AdamW
// (Defazio et al. 2024, Algorithm 1; the averaging weights c_{t+1} =
// γ_t²/Σγ_i², generalized by r), Prodigy (Mishchenko & Defazio 2024,
// Algorithm "Prodigy (Adam version)", without the (1−β3) factors that
// cancel in d̂), D-Adaptation SGD (Defazio & Mishchenko 2023, the
// reference's SGD form with d̂ = 2r/‖s‖) and DoG (Ivgi et al. 2023, eq.
// (1): η_t = r̄_t/√(Σ‖g_i‖²)). The first Schedule-Free SGD row checks by
// hand: g_0 = h(x_0 − c) + 0.01x_0 = (−0.697, 0.643, 1.412), z_1 = x_0 −
// 0.1g_0 = (0.3697, −0.7643, 1.0588), and c_1 = 1 gives x_1 = y_1 = z_1.
var (
	lrFree    = []float64{1, 1, 0.5, 1, 1}
	lrSFSGD   = []float64{0.1, 0.2, 0.3, 0.3, 0.3}
	lrSFAdamW = []float64{0.01, 0.02, 0.03, 0.03, 0.03}
)

var (
	// SGDScheduleFreeReference momentum 0.9 wd 0.01
	sfSGD = [][]float64{
		{0.3697, -0.7643, 1.0588, 0.3697, -0.7643, 1.0588},
		{0.472462892, -0.864373948, 0.8737771679999999, 0.46995648, -0.86193312, 0.87828992},
		{0.5933939589555715, -0.9923267718987142, 0.693708209508, 0.5868972495368572, -0.9854639481145714, 0.703423036376},
		{0.6706257163231828, -1.0834962661191636, 0.6060002138656274, 0.6593545765634851, -1.0702996079262377, 0.6191148245881776},
		{0.7333384328987005, -1.1642985354670878, 0.5497030786848286, 0.7182797718747186, -1.1451660103924015, 0.5638311331607315},
	}
	// SGDScheduleFreeReference momentum 0.9 r 1
	sfSGDR1 = [][]float64{
		{0.37, -0.765, 1.06, 0.37, -0.765, 1.06},
		{0.4834, -0.87615, 0.8584, 0.482, -0.8747777777777778, 0.8608888888888889},
		{0.6129595, -1.0160600624999998, 0.674944, 0.608735, -1.0115025694444444, 0.6809422222222222},
		{0.6958314325, -1.11774382609375, 0.5902204799999999, 0.687913575, -1.108085530034722, 0.5984679111111111},
		{0.76395119365, -1.2102196871671873, 0.5375203515076923, 0.75346324625, -1.1961322172178819, 0.5459269114529914},
	}
	// AdamWScheduleFreeReference wd 0.05
	sfAdamW = [][]float64{
		{0.30984999985714284, -0.7096499998461538, 1.1894000000714287, 0.30984999985714284, -0.7096499998461538, 1.1894000000714287},
		{0.3258793683014194, -0.7254069076756324, 1.1721502224514713, 0.3254884080954614, -0.7250225928505232, 1.1725709487348848},
		{0.3477513609091301, -0.7470318774479037, 1.1486136477406315, 0.346579626550516, -0.7458734940480416, 1.1498745583192764},
		{0.36466609508151404, -0.7638877959389792, 1.1304128641758948, 0.3622313781638797, -0.761462793761353, 1.1330327076182731},
		{0.38067004557159173, -0.7799245055748915, 1.113193505176092, 0.37691704247090696, -0.7761668120199234, 1.1172315729298103},
	}
	// AdamWScheduleFreePaper wd 0.05
	sfAdamWPaper = [][]float64{
		{0.3099952520659723, -0.7099889271631492, 1.1899810285928083, 0.3099952520659723, -0.7099889271631492, 1.1899810285928083},
		{0.3278520579113433, -0.7278899475980034, 1.1720641764735806, 0.32763149459803587, -0.7276688381558732, 1.172285481465172},
		{0.35204879840410275, -0.7523067059107725, 1.147768649694062, 0.3512607198103859, -0.7515115085242521, 1.1485599405940738},
		{0.3713450851518023, -0.7719544526274745, 1.1283825354628512, 0.36951817300383505, -0.7700949234719588, 1.130217910687413},
		{0.3902351778231764, -0.7913112604504385, 1.109395699809123, 0.3873756408948508, -0.788382801457316, 1.1122697581710859},
	}
	// ProdigyReference defaults
	prodigyDefault = [][]float64{
		{0.3000031622762316, -0.7000031622761217, 1.199996837723054},
		{0.30000741186527174, -0.7000074118652276, 1.1999925881329403},
		{0.3000112926904215, -0.7000112926891165, 1.1999887073062094},
		{0.3000300686316027, -0.7000300686105295, 1.1999699313553929},
		{0.3000765146965587, -0.7000765145183969, 1.1999234852643594},
	}
	// ProdigyReference d0 0.1 wd 0.01 decoupled, bias correction
	prodigyDecoupledBC = [][]float64{
		{0.3999050864948202, -0.7997785919133863, 1.0996205492684723},
		{0.4991175352860661, -0.8993029309199698, 1.0000602527400257},
		{0.5480441773309038, -0.948809970558627, 0.950989232507237},
		{0.6446338758974381, -1.0473628904088736, 0.8541465056320836},
		{0.7387731461207682, -1.1450644399024135, 0.7597870739811823},
	}
	// ProdigyReference d0 0.1 wd 0.01 L2, safeguard, growth 1.5
	prodigyL2Safeguard = [][]float64{
		{0.61622762254488, -1.016227610495919, 0.8837723048046762},
		{1.0172581333662964, -1.4337386714017952, 0.48186312005636006},
		{1.2223899995121308, -1.7083935441318912, 0.27282988543581665},
		{1.4561469866981605, -2.340578166572545, 0.02176759778301357},
		{1.3744825784541466, -2.7673640394830263, 0.09246963559608604},
	}
	// DAdaptSGD defaults
	dadaptDefault = [][]float64{
		{0.3000004130170889, -0.7000003835158682, 1.199999173965822},
		{0.3000008260339342, -0.7000007670316234, 1.199998347932619},
		{0.3000010325422349, -0.7000009587894445, 1.1999979349165049},
		{0.3000016933680066, -0.7000015724138278, 1.199996613266911},
		{0.3000029021937706, -0.7000026948962521, 1.1999941956212314},
	}
	// DAdaptSGD d0 0.1 momentum 0.9 growth 1.5
	dadaptMomentum = [][]float64{
		{0.3041301708893559, -0.7038351586829733, 1.1917396582212882},
		{0.311953126562596, -0.7111106459943738, 1.1761424849078803},
		{0.321023608930786, -0.7195597750351751, 1.1581156231997798},
		{0.335196232758487, -0.7328301736105143, 1.1302423191391893},
		{0.35677722938175904, -0.7531847200710724, 1.0884227195434153},
	}
	// DoG defaults
	dogDefault = [][]float64{
		{0.3000010000246628, -0.7000009285943297, 1.1999979999506742},
		{0.30000170714868624, -0.7000015852099634, 1.1999965857046477},
		{0.3000021999597054, -0.7000020428207534, 1.1999956000850132},
		{0.30000329993852864, -0.7000030642312658, 1.1999934001342807},
		{0.30000477571296913, -0.7000044345964763, 1.1999904485993138},
	}
	// DoG wd 0.01 reps_rel 1e-2
	dogWD = [][]float64{
		{0.3099220429033624, -0.709153333697076, 1.1798996777911797},
		{0.31691756187228476, -0.7156534798817014, 1.165932662831994},
		{0.3217640499551555, -0.7201799410659426, 1.1563558880058202},
		{0.33253849962753407, -0.7302790493207012, 1.1352181829296804},
		{0.346785878482634, -0.743741729458751, 1.1077206163492148},
	}
)

func refQuadGrad(x []float64) []float64 {
	h, c := []float64{1, 0.5, 2}, []float64{1, -2, 0.5}
	g := make([]float64, len(x))
	for i := range x {
		g[i] = h[i] * (x[i] - c[i])
	}
	return g
}

// closeTo reports |a−b| ≤ 1e-12·max(1, |b|).
func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestLRFreeReference(t *testing.T) {
	sgd, sgdR := DefaultScheduleFreeSGD(), DefaultScheduleFreeSGD()
	sgd.WeightDecay, sgdR.R = 0.01, 1
	adamw, paper := DefaultScheduleFreeAdamW(), DefaultScheduleFreeAdamW()
	adamw.WeightDecay, paper.WeightDecay, paper.PaperBiasCorrection = 0.05, 0.05, true
	pbc := DefaultProdigy()
	pbc.D0, pbc.WeightDecay, pbc.BiasCorrection = 0.1, 0.01, true
	pl2 := DefaultProdigy()
	pl2.D0, pl2.WeightDecay, pl2.Decoupled, pl2.SafeguardWarmup, pl2.GrowthRate = 0.1, 0.01, false, true, 1.5
	dam := DefaultDAdaptSGD()
	dam.D0, dam.Momentum, dam.GrowthRate = 0.1, 0.9, 1.5
	dwd := DefaultDoG()
	dwd.WeightDecay, dwd.RepsRel = 0.01, 1e-2
	sf := func(c ScheduleFreeConfig) func() (LRAware[float64], error) {
		return func() (LRAware[float64], error) { return NewScheduleFree[float64](c, 3) }
	}
	pr := func(c ProdigyConfig) func() (LRAware[float64], error) {
		return func() (LRAware[float64], error) { return NewProdigy[float64](c, 3) }
	}
	da := func(c DAdaptSGDConfig) func() (LRAware[float64], error) {
		return func() (LRAware[float64], error) { return NewDAdaptSGD[float64](c, 3) }
	}
	dg := func(c DoGConfig) func() (LRAware[float64], error) {
		return func() (LRAware[float64], error) { return NewDoG[float64](c, 3) }
	}
	for _, tc := range []struct {
		name string
		mk   func() (LRAware[float64], error)
		lrs  []float64
		want [][]float64
	}{
		{"ScheduleFreeSGD", sf(sgd), lrSFSGD, sfSGD},
		{"ScheduleFreeSGD-r1", sf(sgdR), lrSFSGD, sfSGDR1},
		{"ScheduleFreeAdamW", sf(adamw), lrSFAdamW, sfAdamW},
		{"ScheduleFreeAdamW-paper", sf(paper), lrSFAdamW, sfAdamWPaper},
		{"Prodigy", pr(DefaultProdigy()), lrFree, prodigyDefault},
		{"Prodigy-decoupled-bc", pr(pbc), lrFree, prodigyDecoupledBC},
		{"Prodigy-L2-safeguard", pr(pl2), lrFree, prodigyL2Safeguard},
		{"DAdaptSGD", da(DefaultDAdaptSGD()), lrFree, dadaptDefault},
		{"DAdaptSGD-momentum", da(dam), lrFree, dadaptMomentum},
		{"DoG", dg(DefaultDoG()), lrFree, dogDefault},
		{"DoG-wd", dg(dwd), lrFree, dogWD},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := tc.mk()
			if err != nil {
				t.Fatal(err)
			}
			x := []float64{0.3, -0.7, 1.2}
			d := make([]float64, 3)
			for k, lr := range tc.lrs {
				if err := dir.SetLR(lr); err != nil {
					t.Fatal(err)
				}
				if err := dir.Compute(d, refQuadGrad(x), x); err != nil {
					t.Fatal(err)
				}
				Update(x, d, lr)
				got := x
				if s, ok := dir.(*ScheduleFree[float64]); ok {
					got = append(append([]float64(nil), x...), s.X()...)
				}
				for i, w := range tc.want[k] {
					if !closeTo(got[i], w) {
						t.Fatalf("step %d: got %v, want %v (reference)", k+1, got, tc.want[k])
					}
				}
				if !(dir.EffectiveLR() > 0) {
					t.Fatalf("step %d: EffectiveLR = %v", k+1, dir.EffectiveLR())
				}
			}
		})
	}
}

// The effective steps and estimates follow their definitions.
func TestLRFreeEffectiveLR(t *testing.T) {
	x := []float64{0.3, -0.7, 1.2}
	g0 := refQuadGrad(x)
	d := make([]float64, 3)

	// DoG's first step: η_0 = r_ε/√(‖g_0‖² + ε), r_ε = 1e-6(1 + ‖x_0‖).
	dog, _ := NewDoG[float64](DefaultDoG(), 3)
	_ = dog.SetLR(0.5)
	if err := dog.Compute(d, append([]float64(nil), g0...), x); err != nil {
		t.Fatal(err)
	}
	eta := 1e-6 * (1 + math.Sqrt(Dot(x, x))) / math.Sqrt(Dot(g0, g0)+1e-8)
	if !closeTo(dog.Eta(), eta) || !closeTo(dog.EffectiveLR(), 0.5*eta) {
		t.Errorf("DoG: η = %v, EffectiveLR = %v; want %v, %v", dog.Eta(), dog.EffectiveLR(), eta, 0.5*eta)
	}

	// D-Adaptation's first step: λ_0 = α d_0/‖g_0‖, and d stays d_0 (r_1 = 0).
	da, _ := NewDAdaptSGD[float64](DefaultDAdaptSGD(), 3)
	_ = da.SetLR(2)
	if err := da.Compute(d, append([]float64(nil), g0...), x); err != nil {
		t.Fatal(err)
	}
	if want := 2 * 1e-6 / math.Sqrt(Dot(g0, g0)); !closeTo(da.EffectiveLR(), want) || da.D() != 1e-6 {
		t.Errorf("DAdaptSGD: λ = %v, d = %v; want %v, 1e-6", da.EffectiveLR(), da.D(), want)
	}

	// Prodigy's first step: λ_0 = α d_0; its d only grows.
	p, _ := NewProdigy[float64](DefaultProdigy(), 3)
	_ = p.SetLR(1)
	prev := p.D()
	for k := range 5 {
		if err := p.Compute(d, refQuadGrad(x), x); err != nil {
			t.Fatal(err)
		}
		if k == 0 && p.EffectiveLR() != 1e-6 {
			t.Errorf("Prodigy: λ_0 = %v, want d_0 = 1e-6", p.EffectiveLR())
		}
		if p.D() < prev {
			t.Errorf("Prodigy: d fell from %v to %v", prev, p.D())
		}
		prev = p.D()
		Update(x, d, 1)
	}
	if !(p.D() > 1e-6) {
		t.Errorf("Prodigy: d = %v after 5 steps, want > d_0", p.D())
	}
}

// Eval and Train switch the parameters between x and y; before the first
// step they leave them alone.
func TestScheduleFreeEvalTrain(t *testing.T) {
	s, _ := NewScheduleFree[float64](DefaultScheduleFreeSGD(), 3)
	p := []float64{0.3, -0.7, 1.2}
	if err := s.Eval(p); err != nil || p[0] != 0.3 {
		t.Fatalf("Eval before the first step: p = %v, err %v", p, err)
	}
	d := make([]float64, 3)
	for _, lr := range lrSFSGD {
		_ = s.SetLR(lr)
		if err := s.Compute(d, refQuadGrad(p), p); err != nil {
			t.Fatal(err)
		}
		Update(p, d, lr)
	}
	y := append([]float64(nil), p...)
	if err := s.Eval(p); err != nil {
		t.Fatal(err)
	}
	for i := range p {
		if p[i] != s.X()[i] {
			t.Fatalf("Eval: p = %v, want x = %v", p, s.X())
		}
	}
	if err := s.Train(p); err != nil {
		t.Fatal(err)
	}
	for i := range p {
		if !closeTo(p[i], y[i]) {
			t.Fatalf("Train: p = %v, want y = %v", p, y)
		}
	}
	if err := s.Eval(p[:2]); err == nil {
		t.Error("Eval of a short vector accepted")
	}
}

func TestLRFreeConfigErrors(t *testing.T) {
	sf := DefaultScheduleFreeAdamW()
	sf.Beta1 = 1
	pr := DefaultProdigy()
	pr.GrowthRate = 0.5
	pr2 := DefaultProdigy()
	pr2.D0 = 0
	da := DefaultDAdaptSGD()
	da.Momentum = -1
	dg := DefaultDoG()
	dg.RepsRel = math.Inf(1)
	sgd := func(f func(*ScheduleFreeConfig)) error {
		c := DefaultScheduleFreeSGD()
		f(&c)
		return c.Validate()
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{sf.Validate(), "ScheduleFreeConfig.Beta1 = 1: must be in (0, 1)"},
		{pr.Validate(), "ProdigyConfig.GrowthRate = 0.5: must be in [1, +Inf]"},
		{pr2.Validate(), "ProdigyConfig.D0 = 0: must be in (0, +Inf)"},
		{da.Validate(), "DAdaptSGDConfig.Momentum = -1: must be in [0, 1)"},
		{dg.Validate(), "DoGConfig.RepsRel = +Inf: must be in (0, +Inf)"},
		// Adam's settings on Schedule-Free SGD would be ignored.
		{sgd(func(c *ScheduleFreeConfig) { c.Beta2 = 7 }), "ScheduleFreeConfig.Beta2 = 7: must be 0 without Adam"},
		{sgd(func(c *ScheduleFreeConfig) { c.Eps = -1 }), "ScheduleFreeConfig.Eps = -1: must be 0 without Adam"},
		{sgd(func(c *ScheduleFreeConfig) { c.PaperBiasCorrection = true }), "PaperBiasCorrection = true: must be false without Adam"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", tc.err, tc.want)
		}
	}
	s, _ := NewScheduleFree[float32](DefaultScheduleFreeSGD(), 2)
	for _, lr := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if err := s.SetLR(lr); err == nil {
			t.Errorf("SetLR(%v) accepted", lr)
		}
	}
	if s.LR() != 1 {
		t.Errorf("LR after rejected SetLR = %v, want 1", s.LR())
	}
	if DefaultProdigy().beta3() != math.Sqrt(0.999) {
		t.Error("Prodigy's default β3 is not √β2")
	}
}

// A snapshot records the rate set by SetLR, so a resumed direction
// continues identically even if the caller does not set it again.
func TestLRFreeSnapshotKeepsLR(t *testing.T) {
	for _, c := range lrfreeCases(1e-2) {
		a, _ := newDir[float64](c, 5)
		_ = a.(LRAware[float64]).SetLR(0.3)
		step(t, a, 1)
		b := zeroDir[float64](c)
		if err := b.UnmarshalBinary(snapshot(t, a)); err != nil {
			t.Fatal(err)
		}
		if got := b.(LRAware[float64]).LR(); got != 0.3 {
			t.Errorf("%s: restored LR = %v, want 0.3", c.name, got)
		}
		da, _ := step(t, a, 2)
		db, _ := step(t, b, 2)
		if !sameBits(da, db) {
			t.Errorf("%s: restored direction differs", c.name)
		}
	}
}

// TestComputeAtRefused: a step ComputeAt refuses (a non-finite gradient, a
// rate out of range) leaves every LRAware direction as it was: its rate and
// its snapshot.
func TestComputeAtRefused(t *testing.T) {
	for _, c := range lrfreeCases(1e-2) {
		t.Run(c.name, func(t *testing.T) {
			d0, err := newDir[float64](c, 3)
			if err != nil {
				t.Fatal(err)
			}
			dir := d0.(LRAware[float64])
			x, d := []float64{1, -2, 0.5}, make([]float64, 3)
			if err := ComputeAt(dir, 0.5, d, []float64{0.1, 0.2, -0.3}, x); err != nil {
				t.Fatal(err)
			}
			before, err := dir.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range []struct {
				lr float64
				g  []float64
			}{
				{2, []float64{math.NaN(), 0.2, -0.3}},
				{2, []float64{math.Inf(1), 0.2, -0.3}},
				{math.Inf(1), []float64{0.1, 0.2, -0.3}},
				{0, []float64{0.1, 0.2, -0.3}},
			} {
				if err := ComputeAt(dir, bad.lr, d, bad.g, x); err == nil {
					t.Fatalf("ComputeAt(lr %v, g %v): no error", bad.lr, bad.g)
				}
				if dir.LR() != 0.5 {
					t.Fatalf("after a refused ComputeAt(lr %v, g %v): LR() = %v, want 0.5", bad.lr, bad.g, dir.LR())
				}
				after, _ := dir.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
				if !bytes.Equal(before, after) {
					t.Fatalf("a refused ComputeAt(lr %v, g %v) changed the snapshot", bad.lr, bad.g)
				}
			}
		})
	}
}
