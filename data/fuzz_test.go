package data

import (
	"bytes"
	"testing"
)

// FuzzReadIDX feeds arbitrary bytes to both IDX readers: they must not panic,
// and what they accept must be consistent with its header.
func FuzzReadIDX(f *testing.F) {
	labels := idxFile(2049, []uint32{3}, []byte{1, 2, 3})
	f.Add(twoImages)
	f.Add(gz(f, twoImages))
	f.Add(labels)
	f.Add(gz(f, labels))
	f.Add(idxFile(2051, []uint32{1 << 20, 28, 28}, []byte{1, 2}))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, b []byte) {
		if im, err := ReadIDXImages(bytes.NewReader(b)); err == nil {
			if im.N < 0 || im.Rows < 1 || im.Cols < 1 || len(im.Pixels) != im.N*im.Dim() {
				t.Errorf("accepted inconsistent images %d×%d×%d with %d pixels", im.N, im.Rows, im.Cols, len(im.Pixels))
			}
			if _, err := im.Float32(MNISTMean, MNISTStd); err != nil {
				t.Errorf("Float32 of accepted images: %v", err)
			}
		}
		if y, err := ReadIDXLabels(bytes.NewReader(b)); err == nil && len(b) >= 8 && b[0] != 0x1f {
			if n := int(b[4])<<24 | int(b[5])<<16 | int(b[6])<<8 | int(b[7]); len(y) != n {
				t.Errorf("accepted %d labels, header says %d", len(y), n)
			}
		}
	})
}
