package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Images is a batch of 8-bit images stored image after image, each in
// channel, row, column order (CHW; row-major for one channel).
type Images struct {
	N, Channels, Rows, Cols int
	Pixels                  []uint8 // len N·Channels·Rows·Cols
}

// Dim is the number of values per image, Channels·Rows·Cols.
func (im *Images) Dim() int { return im.Channels * im.Rows * im.Cols }

// Labels holds one class label per image.
type Labels []uint8

// IDX magic numbers: two zero bytes, the element type (0x08 = unsigned byte)
// and the number of dimensions.
const (
	idxImagesMagic = 0x00000803 // 2051
	idxLabelsMagic = 0x00000801 // 2049
)

// ReadIDXImages reads an IDX images file (magic 2051: N, rows, cols, then
// N·rows·cols unsigned bytes). A gzip stream is recognised by its magic bytes
// and decompressed. The length must match the header exactly.
func ReadIDXImages(r io.Reader) (*Images, error) {
	dims, px, err := readIDX(r, idxImagesMagic)
	if err != nil {
		return nil, fmt.Errorf("data: idx images: %w", err)
	}
	return &Images{N: dims[0], Channels: 1, Rows: dims[1], Cols: dims[2], Pixels: px}, nil
}

// ReadIDXLabels reads an IDX labels file (magic 2049: N, then N unsigned
// bytes), gzip-compressed or not.
func ReadIDXLabels(r io.Reader) (Labels, error) {
	_, b, err := readIDX(r, idxLabelsMagic)
	if err != nil {
		return nil, fmt.Errorf("data: idx labels: %w", err)
	}
	return Labels(b), nil
}

// readIDX parses an unsigned-byte IDX stream with the given magic. Its errors
// carry no prefix; callers add one.
func readIDX(r io.Reader, magic uint32) (dims []int, body []byte, err error) {
	br := bufio.NewReader(r)
	if p, _ := br.Peek(2); len(p) == 2 && p[0] == 0x1f && p[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		r = zr
	} else {
		r = br
	}
	ndim := int(magic & 0xff)
	hdr := make([]byte, 4+4*ndim)
	// The magic first, so that a wrong kind of file is reported as such.
	for _, part := range [][2]int{{0, 4}, {4, len(hdr)}} {
		if n, err := io.ReadFull(r, hdr[part[0]:part[1]]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, nil, fmt.Errorf("header truncated: %d of %d bytes", part[0]+n, len(hdr))
			}
			return nil, nil, err
		}
		if got := binary.BigEndian.Uint32(hdr); got != magic {
			return nil, nil, fmt.Errorf("magic %#08x (%d): want %#08x (%d)", got, got, magic, magic)
		}
	}
	dims = make([]int, ndim)
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(hdr[4+4*i:]))
		if i > 0 && dims[i] == 0 {
			return nil, nil, fmt.Errorf("header %v: dimension %d = 0: must be ≥ 1", dims[:i+1], i)
		}
	}
	want, ok := mulInts(dims...)
	if !ok {
		return nil, nil, fmt.Errorf("header %v: the data size overflows an int", dims)
	}
	body, err = readExactly(r, want)
	if err != nil {
		return nil, nil, fmt.Errorf("header %v: %w", dims, err)
	}
	return dims, body, nil
}

// readExactly reads exactly want bytes followed by the end of the stream. The
// buffer grows with the data actually read, so a header claiming a huge size
// on a short stream allocates little.
func readExactly(r io.Reader, want int) ([]byte, error) {
	buf := make([]byte, 0, min(want, 1<<20))
	for len(buf) < want {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(want, 2*cap(buf)))
			copy(nb, buf)
			buf = nb
		}
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("data truncated: %d of %d bytes", len(buf), want)
		}
		if err != nil {
			return nil, err
		}
	}
	var one [1]byte
	n, err := io.ReadFull(r, one[:])
	if n > 0 {
		return nil, fmt.Errorf("trailing data after the %d bytes the header announces", want)
	}
	if err != io.EOF {
		// e.g. a gzip checksum error or a cut gzip trailer, seen only at the end
		return nil, fmt.Errorf("after the data: %w", err)
	}
	return buf, nil
}

// Float32 returns the images as float32 features, one row of Dim values per
// image in the order of Pixels (channel, row, column: CHW, each channel a
// row-major plane; the order of the CIFAR-10 binary records), normalised as
// torchvision's ToTensor then Normalize(mean, std): (pixel/255 − mean[c])/std[c]
// for channel c, each operation rounded to float32 as PyTorch does. mean and
// std hold one value per channel. See [Images.Float32HWC] for channel-last
// order.
func (im *Images) Float32(mean, std []float32) ([]float32, error) {
	lut, err := im.normLUT(mean, std)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(im.Pixels))
	plane := im.Rows * im.Cols
	for k, off := 0, 0; off < len(out); k, off = k+1, off+plane {
		t, dst := &lut[k%im.Channels], out[off:off+plane]
		for i, p := range im.Pixels[off : off+plane] {
			dst[i] = t[p]
		}
	}
	return out, nil
}

// Float32HWC is [Images.Float32] with each image in row, column, channel
// order (HWC, channel last; NHWC for the whole batch) as convolutional models
// with channels-last inputs take it: value (y, x, c) of image i is at
// i·Dim + (y·Cols + x)·Channels + c, where Float32 puts it at
// i·Dim + (c·Rows + y)·Cols + x. The values are the same, bit for bit; for
// one channel the two orders coincide.
func (im *Images) Float32HWC(mean, std []float32) ([]float32, error) {
	lut, err := im.normLUT(mean, std)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(im.Pixels))
	ch, plane := im.Channels, im.Rows*im.Cols
	dim := ch * plane
	for off := 0; off < len(out); off += dim {
		img, dst := im.Pixels[off:off+dim], out[off:off+dim]
		for c := range ch {
			t := &lut[c]
			for i, p := range img[c*plane : (c+1)*plane] {
				dst[i*ch+c] = t[p]
			}
		}
	}
	return out, nil
}

// normLUT checks the shape of im against its pixels and mean and std against
// its channels, and returns for each channel the normalised value of every
// pixel value.
func (im *Images) normLUT(mean, std []float32) ([][256]float32, error) {
	if im.N < 0 || im.Channels < 1 || im.Rows < 1 || im.Cols < 1 {
		return nil, fmt.Errorf("data: images %d×%d×%d×%d: N must be ≥ 0 and channels, rows, cols ≥ 1", im.N, im.Channels, im.Rows, im.Cols)
	}
	total, ok := mulInts(im.N, im.Channels, im.Rows, im.Cols)
	if !ok {
		return nil, fmt.Errorf("data: images %d×%d×%d×%d: too large", im.N, im.Channels, im.Rows, im.Cols)
	}
	if len(im.Pixels) != total {
		return nil, fmt.Errorf("data: images: len(Pixels) = %d: must be N·Channels·Rows·Cols = %d", len(im.Pixels), total)
	}
	if len(mean) != im.Channels || len(std) != im.Channels {
		return nil, fmt.Errorf("data: len(mean) = %d, len(std) = %d: must both be the number of channels, %d", len(mean), len(std), im.Channels)
	}
	lut := make([][256]float32, im.Channels)
	for c := range lut {
		m, s := float64(mean[c]), float64(std[c])
		if math.IsNaN(m) || math.IsInf(m, 0) {
			return nil, fmt.Errorf("data: mean[%d] = %v: must be finite", c, m)
		}
		if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
			return nil, fmt.Errorf("data: std[%d] = %v: must be finite and > 0", c, s)
		}
		for v := range lut[c] {
			lut[c][v] = normalize(uint8(v), mean[c], std[c])
		}
	}
	return lut, nil
}

// normalize is (v/255 − mean)/std with each operation rounded to float32.
func normalize(v uint8, mean, std float32) float32 {
	x := float32(float32(v) / 255)
	return float32(x-mean) / std
}

// mulInts returns the product of non-negative ints and whether it fits in an
// int.
func mulInts(xs ...int) (int, bool) {
	p := uint64(1)
	for _, x := range xs {
		if x < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(p, uint64(x))
		if hi != 0 || lo > math.MaxInt {
			return 0, false
		}
		p = lo
	}
	return int(p), true
}
