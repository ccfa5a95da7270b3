package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// idxFile builds an IDX file: magic, big-endian dims, then body.
func idxFile(magic uint32, dims []uint32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, body...)
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// twoImages is two 2×3 images with pixels 0..11.
var twoImages = idxFile(2051, []uint32{2, 2, 3}, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})

func TestReadIDXImages(t *testing.T) {
	for name, in := range map[string][]byte{"raw": twoImages, "gz": gz(t, twoImages)} {
		im, err := ReadIDXImages(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if im.N != 2 || im.Channels != 1 || im.Rows != 2 || im.Cols != 3 || im.Dim() != 6 {
			t.Errorf("%s: shape %d×%d×%d×%d, want 2×1×2×3", name, im.N, im.Channels, im.Rows, im.Cols)
		}
		if want := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !bytes.Equal(im.Pixels, want) {
			t.Errorf("%s: pixels %v, want %v", name, im.Pixels, want)
		}
	}
	// Zero images is a valid (empty) file.
	im, err := ReadIDXImages(bytes.NewReader(idxFile(2051, []uint32{0, 28, 28}, nil)))
	if err != nil || im.N != 0 || len(im.Pixels) != 0 {
		t.Errorf("empty file: %+v, %v", im, err)
	}
}

func TestReadIDXLabels(t *testing.T) {
	in := idxFile(2049, []uint32{4}, []byte{7, 2, 1, 0})
	for name, b := range map[string][]byte{"raw": in, "gz": gz(t, in)} {
		y, err := ReadIDXLabels(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(y, Labels{7, 2, 1, 0}) {
			t.Errorf("%s: labels %v", name, y)
		}
	}
}

func TestReadIDXErrors(t *testing.T) {
	gzTwo := gz(t, twoImages)
	noise := make([]byte, 1000)
	for i := range noise {
		noise[i] = byte(i * i * 7919 >> 3)
	}
	gzBig := gz(t, idxFile(2051, []uint32{10, 10, 10}, noise))
	badCRC := slices.Clone(gzTwo)
	badCRC[len(badCRC)-6] ^= 0xff // inside the CRC-32 of the gzip trailer
	for _, tc := range []struct {
		name   string
		labels bool
		in     []byte
		want   string
	}{
		{"empty", false, nil, "header truncated: 0 of 16 bytes"},
		{"labels magic for images", false, idxFile(2049, []uint32{2}, []byte{1, 2}), "magic 0x00000801 (2049): want 0x00000803 (2051)"},
		{"images magic for labels", true, twoImages, "magic 0x00000803 (2051): want 0x00000801 (2049)"},
		{"float type", false, idxFile(0x0d03, []uint32{1, 1, 1}, []byte{0, 0, 0, 0}), "magic 0x00000d03 (3331)"},
		{"short header", false, twoImages[:10], "header truncated: 10 of 16 bytes"},
		{"truncated data", false, twoImages[:len(twoImages)-1], "data truncated: 11 of 12 bytes"},
		{"trailing data", false, append(slices.Clone(twoImages), 0), "trailing data after the 12 bytes"},
		{"dims larger than data", false, idxFile(2051, []uint32{3, 2, 3}, twoImages[16:]), "header [3 2 3]: data truncated: 12 of 18 bytes"},
		{"dims smaller than data", false, idxFile(2051, []uint32{2, 2, 2}, twoImages[16:]), "trailing data"},
		{"zero rows", false, idxFile(2051, []uint32{2, 0, 3}, nil), "dimension 1 = 0"},
		{"huge header, no data", false, idxFile(2051, []uint32{math.MaxUint32, math.MaxUint32, math.MaxUint32}, nil), "overflows an int"},
		{"huge count, little data", false, idxFile(2051, []uint32{1 << 30, 28, 28}, make([]byte, 100)), "data truncated: 100 of"},
		{"labels truncated", true, idxFile(2049, []uint32{5}, []byte{1, 2}), "data truncated: 2 of 5 bytes"},
		{"gzip truncated", false, gzTwo[:len(gzTwo)-10], "after the data: unexpected EOF"},
		{"gzip data truncated", false, gzBig[:len(gzBig)/2], "header [10 10 10]: data truncated: "},
		{"gzip bad crc", false, badCRC, "after the data: gzip: invalid checksum"},
	} {
		var err error
		if tc.labels {
			_, err = ReadIDXLabels(bytes.NewReader(tc.in))
		} else {
			_, err = ReadIDXImages(bytes.NewReader(tc.in))
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "data: idx ") {
			t.Errorf("%s: error %q lacks the package prefix", tc.name, err)
		}
	}
}

func TestFloat32(t *testing.T) {
	im := &Images{N: 1, Channels: 1, Rows: 2, Cols: 3, Pixels: []uint8{0, 1, 127, 128, 254, 255}}
	got, err := im.Float32(MNISTMean, MNISTStd)
	if err != nil {
		t.Fatal(err)
	}
	// numpy 1.24.2 float32: (v/np.float32(255) - np.float32(0.1307)) / np.float32(0.3081),
	// which is what torchvision's ToTensor + Normalize compute.
	want := []uint32{0xbed93271, 0xbed2ae20, 0x3f989c64, 0x3f9a3d7a, 0x4033c2b3, 0x4034933d}
	for i := range want {
		if b := math.Float32bits(got[i]); b != want[i] {
			t.Errorf("pixel %d: %v (%#x), want %v (%#x)", im.Pixels[i], got[i], b, math.Float32frombits(want[i]), want[i])
		}
	}

	// Three channels, two images: channel c of each image uses mean[c], std[c].
	rgb := &Images{N: 2, Channels: 3, Rows: 1, Cols: 2, Pixels: []uint8{
		0, 255, 0, 255, 0, 255,
		255, 0, 255, 0, 255, 0,
	}}
	out, err := rgb.Float32([]float32{0, 1, 0}, []float32{1, 1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	wantRGB := []float32{0, 1, -1, 0, 0, 2, 1, 0, 0, -1, 2, 0}
	if !slices.Equal(out, wantRGB) {
		t.Errorf("rgb: %v, want %v", out, wantRGB)
	}

	nan := float32(math.NaN())
	for _, tc := range []struct {
		im        *Images
		mean, std []float32
		want      string
	}{
		{im, []float32{0.1}, []float32{0}, "std[0] = 0: must be finite and > 0"},
		{im, []float32{0.1}, []float32{-1}, "std[0] = -1"},
		{im, []float32{nan}, []float32{1}, "mean[0] = NaN: must be finite"},
		{im, []float32{0.1}, []float32{float32(math.Inf(1))}, "std[0] = +Inf"},
		{im, []float32{0.1, 0.2}, []float32{1, 1}, "len(mean) = 2, len(std) = 2: must both be the number of channels, 1"},
		{&Images{N: 2, Channels: 1, Rows: 2, Cols: 3, Pixels: im.Pixels}, MNISTMean, MNISTStd, "len(Pixels) = 6: must be N·Channels·Rows·Cols = 12"},
		{&Images{N: 1, Channels: 0, Rows: 2, Cols: 3}, nil, nil, "channels, rows, cols ≥ 1"},
	} {
		_, err := tc.im.Float32(tc.mean, tc.std)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}
