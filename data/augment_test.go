package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Two made-up 2×2 RGB images; the first, in CHW order as stored:
//
//	R plane 0 1 / 2 3, G plane 10 11 / 12 13, B plane 20 21 / 22 23,
//
// so in HWC order it is 0 10 20, 1 11 21, 2 12 22, 3 13 23.
func TestFloat32HWC(t *testing.T) {
	im := &Images{N: 2, Channels: 3, Rows: 2, Cols: 2, Pixels: []uint8{
		0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, // image 0
		30, 31, 32, 33, 40, 41, 42, 43, 50, 51, 52, 53, // image 1
	}}
	mean := []float32{0.5, 0.25, 0}
	std := []float32{0.5, 0.25, 1}
	chw, err := im.Float32(mean, std)
	if err != nil {
		t.Fatal(err)
	}
	hwc, err := im.Float32HWC(mean, std)
	if err != nil {
		t.Fatal(err)
	}
	// HWC position (y·2 + x)·3 + c holds CHW position (c·2 + y)·2 + x.
	perm := []int{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}
	for i := range 2 {
		for j, p := range perm {
			if got, want := hwc[i*12+j], chw[i*12+p]; got != want {
				t.Errorf("image %d, hwc[%d] = %v, want chw[%d] = %v", i, j, got, p, want)
			}
		}
	}
	// The values themselves, with exact scaling: mean 0, std 1, so v/255.
	hwc, _ = im.Float32HWC([]float32{0, 0, 0}, []float32{1, 1, 1})
	var got []int
	for _, v := range hwc[:12] {
		got = append(got, int(v*255+0.5))
	}
	if want := []int{0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23}; !slices.Equal(got, want) {
		t.Errorf("image 0 in HWC: %v, want %v", got, want)
	}
	// The same checks as Float32.
	if _, err := im.Float32HWC(mean[:2], std); err == nil || !strings.Contains(err.Error(), "len(mean) = 2, len(std) = 3: must both be the number of channels, 3") {
		t.Errorf("short mean: %v", err)
	}
	bad := *im
	bad.Pixels = bad.Pixels[:23]
	if _, err := bad.Float32HWC(mean, std); err == nil || !strings.Contains(err.Error(), "len(Pixels) = 23: must be N·Channels·Rows·Cols = 24") {
		t.Errorf("short pixels: %v", err)
	}
}

// For one channel HWC and CHW are the same order: MNIST's test set gives the
// same features, bit for bit, either way.
func TestFloat32HWCOneChannel(t *testing.T) {
	ds, err := repoMNIST()
	if err != nil {
		t.Fatal(err)
	}
	a, err := ds.TestX.Float32(ds.Mean, ds.Std)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ds.TestX.Float32HWC(ds.Mean, ds.Std)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Error("Float32HWC differs from Float32 on 1-channel images")
	}
}

// BlackFill is exactly the normalised value of pixel 0.
func TestBlackFill(t *testing.T) {
	im := &Images{N: 1, Channels: 3, Rows: 1, Cols: 1, Pixels: []uint8{0, 0, 0}}
	x, _ := im.Float32HWC(CIFAR10Mean, CIFAR10Std)
	if got := BlackFill(CIFAR10Mean, CIFAR10Std); !slices.Equal(got, x) {
		t.Errorf("BlackFill %v, want %v", got, x)
	}
	if got := BlackFill(CIFAR10Mean, CIFAR10Std)[0]; got != float32(-0.4914)/float32(0.2023) {
		t.Errorf("fill[0] = %v", got)
	}
	// A std of 0 or a NaN mean would fill with -Inf or NaN: a panic naming it.
	for _, c := range []struct{ mean, std float32 }{{0.5, 0}, {float32(math.NaN()), 1}, {0.5, -1}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "data: BlackFill: mean[0]") {
					t.Errorf("BlackFill(%v, %v): recovered %v, want a panic naming mean[0] and std[0]", c.mean, c.std, r)
				}
			}()
			BlackFill([]float32{c.mean}, []float32{c.std})
		}()
	}
}

// seq returns 0, 1, …, n−1 as float32.
func seq(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(i)
	}
	return s
}

func TestCropFlipIdentity(t *testing.T) {
	const h, w, c = 3, 4, 2
	src := seq(h * w * c)
	fill := []float32{-1, -2}
	dst := make([]float32, len(src))
	CropFlip(dst, src, h, w, c, 0, 0, 0, false, fill)
	if !slices.Equal(dst, src) {
		t.Errorf("pad 0, no flip: %v, want %v", dst, src)
	}
	// Without padding the crop is the whole image: padding p with the
	// centre crop (dy = dx = p) is the identity too.
	CropFlip(dst, src, h, w, c, 2, 2, 2, false, fill)
	if !slices.Equal(dst, src) {
		t.Errorf("pad 2, centre crop: %v, want %v", dst, src)
	}
	// Flipping twice gives the image back.
	once, twice := make([]float32, len(src)), make([]float32, len(src))
	CropFlip(once, src, h, w, c, 0, 0, 0, true, fill)
	CropFlip(twice, once, h, w, c, 0, 0, 0, true, fill)
	if slices.Equal(once, src) || !slices.Equal(twice, src) {
		t.Errorf("flip %v, flip twice %v, want %v", once, twice, src)
	}
}

// A 2×3 image with 2 channels, pixel (y, x) = (10·y + x, −(10·y + x)) with
// 1 added to keep 0 out of it: padded by 1, cropped at dy = 0, dx = 2 and
// flipped, worked out by hand.
func TestCropFlipByHand(t *testing.T) {
	src := []float32{
		1, -1, 2, -2, 3, -3, // row 0: (0,0) (0,1) (0,2)
		11, -11, 12, -12, 13, -13, // row 1
	}
	fill := []float32{100, 200}
	dst := make([]float32, len(src))
	// Padded 4×5 image P (first channel), crop rows 0-1, columns 2-4:
	//	P row 0: f f  f  f  f   → crop f f f
	//	P row 1: f 1  2  3  f   → crop 2 3 f
	// then flip each row: f f f / f 3 2.
	CropFlip(dst, src, 2, 3, 2, 1, 0, 2, true, fill)
	want := []float32{
		100, 200, 100, 200, 100, 200,
		100, 200, 3, -3, 2, -2,
	}
	if !slices.Equal(dst, want) {
		t.Errorf("dy 0, dx 2, flip: %v, want %v", dst, want)
	}
	// dy = 2, dx = 0, no flip: rows 2-3, columns 0-2 of P:
	//	P row 2: f 11 12 → f 11 12;  P row 3: f f f.
	CropFlip(dst, src, 2, 3, 2, 1, 2, 0, false, fill)
	want = []float32{
		100, 200, 11, -11, 12, -12,
		100, 200, 100, 200, 100, 200,
	}
	if !slices.Equal(dst, want) {
		t.Errorf("dy 2, dx 0: %v, want %v", dst, want)
	}
}

// AugmentCropFlip: the result is CropFlip with the offsets it returns, is the
// same for the same seed, every output pixel is a source pixel or fill, and
// all (2·pad+1)²·2 choices occur.
func TestAugmentCropFlip(t *testing.T) {
	const h, w, c, pad = 4, 5, 3, 2
	src := seq(h * w * c)
	for i := range src {
		src[i] += 1000 // keep clear of the fill values
	}
	fill := []float32{-1, -2, -3}
	source := map[[3]float32]bool{}
	for i := 0; i < len(src); i += c {
		source[[3]float32(src[i:i+c])] = true
	}
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[[3]int]bool{}
	dst, ref := make([]float32, len(src)), make([]float32, len(src))
	for range 400 {
		dy, dx, flip := AugmentCropFlip(dst, src, h, w, c, pad, fill, r)
		f := 0
		if flip {
			f = 1
		}
		seen[[3]int{dy, dx, f}] = true
		CropFlip(ref, src, h, w, c, pad, dy, dx, flip, fill)
		if !slices.Equal(dst, ref) {
			t.Fatalf("(%d, %d, %v): differs from CropFlip", dy, dx, flip)
		}
		for i := 0; i < len(dst); i += c {
			px := [3]float32(dst[i : i+c])
			if !source[px] && px != [3]float32(fill) {
				t.Fatalf("(%d, %d, %v): pixel %d = %v is neither a source pixel nor the fill", dy, dx, flip, i/c, px)
			}
		}
	}
	if len(seen) != (2*pad+1)*(2*pad+1)*2 {
		t.Errorf("%d distinct (dy, dx, flip) in 400 draws, want %d", len(seen), (2*pad+1)*(2*pad+1)*2)
	}

	// The batch helper draws image after image from the same stream.
	const n = 3
	batch := slices.Concat(src, src, src)
	out := make([]float32, len(batch))
	AugmentCropFlipBatch(out, batch, n, h, w, c, pad, fill, rand.New(rand.NewPCG(7, 7)))
	r = rand.New(rand.NewPCG(7, 7))
	for i := range n {
		AugmentCropFlip(dst, src, h, w, c, pad, fill, r)
		if !slices.Equal(out[i*len(src):(i+1)*len(src)], dst) {
			t.Errorf("batch image %d differs from AugmentCropFlip", i)
		}
	}
}

func TestCropFlipPanics(t *testing.T) {
	src, dst := seq(12), make([]float32, 12)
	fill := []float32{0, 0, 0}
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"offset", func() { CropFlip(dst, src, 2, 2, 3, 1, 3, 0, false, fill) }, "dy = 3, dx = 0: must be in [0, 2·pad] = [0, 2]"},
		{"length", func() { CropFlip(dst[:11], src, 2, 2, 3, 1, 0, 0, false, fill) }, "len(src) = 12, len(dst) = 11: must both be n·h·w·c = 1·2·2·3"},
		{"fill", func() { AugmentCropFlip(dst, src, 2, 2, 3, 1, fill[:1], rand.New(rand.NewPCG(1, 1))) }, "len(fill) = 1: must be c = 3"},
		{"pad", func() { AugmentCropFlip(dst, src, 2, 2, 3, -1, fill, rand.New(rand.NewPCG(1, 1))) }, "pad = -1"},
		{"alias", func() { CropFlip(src, src, 2, 2, 3, 0, 0, 0, false, fill) }, "dst and src are the same slice"},
	} {
		func() {
			defer func() {
				if e, _ := recover().(string); !strings.Contains(e, c.want) {
					t.Errorf("%s: panic %q, want %q", c.name, e, c.want)
				}
			}()
			c.f()
		}()
	}
}
