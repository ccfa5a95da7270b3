package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The CIFAR-10 training augmentation of kuangliu/pytorch-cifar, the code the
// paper cites:
//
//	transforms.RandomCrop(32, padding=4)   # pad with 0 (black), crop 32×32
//	transforms.RandomHorizontalFlip()      # p = 1/2
//	transforms.ToTensor()
//	transforms.Normalize(mean, std)
//
// torchvision pads the raw image with 0, before normalisation, so a padded
// pixel comes out of Normalize as (0 − mean[c])/std[c], not 0. The functions
// here work on images already normalised (by [Images.Float32HWC]); they take
// that value per channel as fill, which [BlackFill] computes.

// BlackFill returns, per channel, the normalised value of a 0 (black) pixel,
// (0/255 − mean[c])/std[c] rounded as [Images.Float32] rounds it: the value
// torchvision's RandomCrop padding takes after Normalize, and the fill to
// pass to [CropFlip] and [AugmentCropFlip]. It panics if len(mean) ≠ len(std),
// or a mean is not finite or a std not finite and > 0 (which [Images.Float32]
// refuses too): the fill would be ±Inf or NaN.
func BlackFill(mean, std []float32) []float32 {
	if len(mean) != len(std) {
		panic(fmt.Sprintf("data: BlackFill: len(mean) = %d ≠ len(std) = %d", len(mean), len(std)))
	}
	fill := make([]float32, len(mean))
	for c := range fill {
		m, sd := float64(mean[c]), float64(std[c])
		if math.IsNaN(m) || math.IsInf(m, 0) || !(sd > 0) || math.IsInf(sd, 0) {
			panic(fmt.Sprintf("data: BlackFill: mean[%d] = %v, std[%d] = %v: the mean must be finite, the std finite and > 0", c, mean[c], c, std[c]))
		}
		fill[c] = normalize(0, mean[c], std[c])
	}
	return fill
}

// CropFlip writes into dst one h×w×c image (HWC, channel last, as
// [Images.Float32HWC] lays it out) cropped from src padded by pad on each
// side, then flipped horizontally if flip:
//
//	dst(y, x, k) = P(y + dy − pad, x' + dx − pad, k),  x' = w−1−x if flip, else x,
//
// where P(i, j, k) is src(i, j, k) for 0 ≤ i < h and 0 ≤ j < w, and fill[k]
// otherwise. So (dy, dx) is the top-left corner of the crop in the padded
// image, and pad 0, dy = dx = 0 without flip copies src.
//
// CropFlip panics (programmer errors) unless h, w, c ≥ 1, pad ≥ 0,
// 0 ≤ dy, dx ≤ 2·pad, len(src) = len(dst) = h·w·c and len(fill) = c, and if
// dst and src start at the same element; they must not overlap at all.
func CropFlip(dst, src []float32, h, w, c, pad, dy, dx int, flip bool, fill []float32) {
	checkCrop("CropFlip", dst, src, 1, h, w, c, pad, fill)
	if dy < 0 || dy > 2*pad || dx < 0 || dx > 2*pad {
		panic(fmt.Sprintf("data: CropFlip: offsets dy = %d, dx = %d: must be in [0, 2·pad] = [0, %d]", dy, dx, 2*pad))
	}
	cropFlip(dst, src, h, w, c, pad, dy, dx, flip, fill)
}

func cropFlip(dst, src []float32, h, w, c, pad, dy, dx int, flip bool, fill []float32) {
	for y := range h {
		row := dst[y*w*c : (y+1)*w*c]
		sy := y + dy - pad
		if sy < 0 || sy >= h {
			for x := range w {
				copy(row[x*c:(x+1)*c], fill)
			}
			continue
		}
		srow := src[sy*w*c : (sy+1)*w*c]
		for x := range w {
			xs := x
			if flip {
				xs = w - 1 - x
			}
			sx := xs + dx - pad
			if sx < 0 || sx >= w {
				copy(row[x*c:(x+1)*c], fill)
			} else {
				copy(row[x*c:(x+1)*c], srow[sx*c:(sx+1)*c])
			}
		}
	}
}

// AugmentCropFlip applies torchvision's RandomCrop(padding=pad) then
// RandomHorizontalFlip to one h×w×c HWC image: it draws, in this order,
//
//	dy = r.IntN(2·pad+1), dx = r.IntN(2·pad+1), flip = r.IntN(2) == 1
//
// (each offset uniform in [0, 2·pad], the flip with probability 1/2), calls
// [CropFlip] with them and returns them. The result depends only on the
// arguments and the state of r. fill is the padding value per channel, for
// normalised images [BlackFill](mean, std). It panics as CropFlip does.
func AugmentCropFlip(dst, src []float32, h, w, c, pad int, fill []float32, r *rand.Rand) (dy, dx int, flip bool) {
	checkCrop("AugmentCropFlip", dst, src, 1, h, w, c, pad, fill)
	dy, dx, flip = r.IntN(2*pad+1), r.IntN(2*pad+1), r.IntN(2) == 1
	cropFlip(dst, src, h, w, c, pad, dy, dx, flip, fill)
	return dy, dx, flip
}

// AugmentCropFlipBatch applies [AugmentCropFlip] to n images of h·w·c values
// each, stored one after another in src, writing them in the same order into
// dst: image i draws its offsets and flip after image i−1. It panics as
// CropFlip does, with len(src) = len(dst) = n·h·w·c (n ≥ 0).
func AugmentCropFlipBatch(dst, src []float32, n, h, w, c, pad int, fill []float32, r *rand.Rand) {
	checkCrop("AugmentCropFlipBatch", dst, src, n, h, w, c, pad, fill)
	dim := h * w * c
	for i := range n {
		dy, dx, flip := r.IntN(2*pad+1), r.IntN(2*pad+1), r.IntN(2) == 1
		cropFlip(dst[i*dim:(i+1)*dim], src[i*dim:(i+1)*dim], h, w, c, pad, dy, dx, flip, fill)
	}
}

// checkCrop panics unless the shapes agree (see CropFlip).
func checkCrop(fn string, dst, src []float32, n, h, w, c, pad int, fill []float32) {
	if n < 0 || h < 1 || w < 1 || c < 1 || pad < 0 || pad > (math.MaxInt-1)/2 {
		panic(fmt.Sprintf("data: %s: n = %d, h = %d, w = %d, c = %d, pad = %d: must be n ≥ 0, h, w, c ≥ 1 and pad ≥ 0", fn, n, h, w, c, pad))
	}
	size, ok := mulInts(n, h, w, c)
	if !ok || len(src) != size || len(dst) != size {
		panic(fmt.Sprintf("data: %s: len(src) = %d, len(dst) = %d: must both be n·h·w·c = %d·%d·%d·%d", fn, len(src), len(dst), n, h, w, c))
	}
	if len(fill) != c {
		panic(fmt.Sprintf("data: %s: len(fill) = %d: must be c = %d", fn, len(fill), c))
	}
	if size > 0 && &dst[0] == &src[0] {
		panic(fmt.Sprintf("data: %s: dst and src are the same slice: they must not overlap", fn))
	}
}
