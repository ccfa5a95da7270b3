package data

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cifarRecords makes n records: label (first+i)%10, pixel j of record i is
// byte(first+i+j).
func cifarRecords(first, n int) []byte {
	var b []byte
	for i := range n {
		b = append(b, byte((first+i)%10))
		for j := range cifarRecord - 1 {
			b = append(b, byte(first+i+j))
		}
	}
	return b
}

func TestLoadCIFAR10Fake(t *testing.T) {
	dir := t.TempDir()
	var reg []File
	// Two training batches of 2 and 3 records, a test batch of 1.
	for _, f := range []struct {
		name     string
		first, n int
	}{{"data_batch_1.bin", 0, 2}, {"data_batch_2.bin", 2, 3}, {"test_batch.bin", 7, 1}} {
		b := cifarRecords(f.first, f.n)
		os.WriteFile(filepath.Join(dir, f.name), b, 0o644)
		reg = append(reg, File{Name: f.name, Size: int64(len(b))})
	}
	r := Registry{CIFAR10: reg}
	ds, err := r.loadCIFAR10(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.TrainX.N != 5 || ds.TestX.N != 1 || ds.TrainX.Channels != 3 || ds.TrainX.Rows != 32 || ds.Classes != 10 {
		t.Fatalf("train %d test %d shape %d×%d", ds.TrainX.N, ds.TestX.N, ds.TrainX.Channels, ds.TrainX.Rows)
	}
	if !slices.Equal(ds.TrainY, Labels{0, 1, 2, 3, 4}) || !slices.Equal(ds.TestY, Labels{7}) {
		t.Errorf("labels %v %v", ds.TrainY, ds.TestY)
	}
	// Record 3 (the second of batch 2) starts with pixel byte(3+0), and
	// channel 1 (offset 1024) with byte(3+1024) = 3 (mod 256).
	im3 := ds.TrainX.Pixels[3*3072 : 4*3072]
	if im3[0] != 3 || im3[1024] != byte(3+1024%256) || len(ds.TrainX.Pixels) != 5*3072 {
		t.Errorf("record 3: %d %d", im3[0], im3[1024])
	}
	// CHW normalisation uses one mean/std per channel.
	x, err := ds.TestX.Float32(ds.Mean, ds.Std)
	if err != nil || len(x) != 3072 {
		t.Fatal(err)
	}

	// Errors: a bad label, a partial record, a missing file.
	bad := cifarRecords(0, 1)
	bad[0] = 10
	os.WriteFile(filepath.Join(dir, "test_batch.bin"), bad, 0o644)
	if _, err := r.loadCIFAR10(dir); err == nil || !strings.Contains(err.Error(), "test_batch.bin: record 0: label 10: must be in [0, 10)") {
		t.Errorf("bad label: %v", err)
	}
	r[CIFAR10][2].Size = 0 // size unknown: only the structure is checked
	os.WriteFile(filepath.Join(dir, "test_batch.bin"), bad[:100], 0o644)
	if _, err := r.loadCIFAR10(dir); err == nil || !strings.Contains(err.Error(), "size 100 bytes: must be a positive multiple of the 3073-byte record") {
		t.Errorf("partial record: %v", err)
	}
	if _, err := LoadCIFAR10(dir); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "size 6146 bytes does not match the expected 30730000") {
		t.Errorf("Known sizes: %v", err)
	}
	if _, err := LoadCIFAR10(t.TempDir()); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "data_batch_1.bin: no such file") {
		t.Errorf("missing: %v", err)
	}
}

// The small synthetic set is the start of the full one, is reproducible from
// the seed, and its first label and pixels follow the documented stream.
func TestSyntheticCIFAR10Small(t *testing.T) {
	a, b := syntheticCIFAR10(7, 40, 20), syntheticCIFAR10(7, 40, 20)
	if !slices.Equal(a.TrainX.Pixels, b.TrainX.Pixels) || !slices.Equal(a.TestY, b.TestY) {
		t.Error("same seed, different data")
	}
	if c := syntheticCIFAR10(8, 40, 20); slices.Equal(a.TrainX.Pixels, c.TrainX.Pixels) {
		t.Error("seeds 7 and 8 give the same pixels")
	}
	if slices.Equal(a.TrainX.Pixels[:20*3072], a.TestX.Pixels) {
		t.Error("train and test share their stream")
	}
	r := rand.New(rand.NewPCG(7, 2))
	y0, u := r.IntN(10), r.Uint64()
	if int(a.TestY[0]) != y0 || binary.LittleEndian.Uint64(a.TestX.Pixels[:8]) != u {
		t.Errorf("test image 0: label %d, first pixels %x; want %d, %x", a.TestY[0], a.TestX.Pixels[:8], y0, u)
	}
	if a.TrainX.N != 40 || a.TestX.N != 20 || len(a.TrainY) != 40 || len(a.TestY) != 20 || len(a.TrainX.Pixels) != 40*3072 {
		t.Errorf("sizes %d, %d", a.TrainX.N, a.TestX.N)
	}
}

func TestSyntheticCIFAR10(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 184 MB")
	}
	ds := SyntheticCIFAR10(7)
	if ds.Name != SyntheticCIFAR10Name || ds.Classes != 10 || !slices.Equal(ds.Mean, CIFAR10Mean) || !slices.Equal(ds.Std, CIFAR10Std) {
		t.Errorf("name %q classes %d mean %v std %v", ds.Name, ds.Classes, ds.Mean, ds.Std)
	}
	for _, s := range []struct {
		x *Images
		y Labels
		n int
	}{{ds.TrainX, ds.TrainY, 50000}, {ds.TestX, ds.TestY, 10000}} {
		if x := s.x; x.N != s.n || x.Channels != 3 || x.Rows != 32 || x.Cols != 32 || len(x.Pixels) != s.n*3072 || len(s.y) != s.n {
			t.Fatalf("shape %d×%d×%d×%d, %d labels; want %d×3×32×32", x.N, x.Channels, x.Rows, x.Cols, len(s.y), s.n)
		}
		// Labels uniform: each class within 5 standard deviations of n/10.
		cnt := make([]int, 10)
		for _, y := range s.y {
			cnt[y]++ // panics if a label is ≥ 10
		}
		sd := math.Sqrt(float64(s.n) * 0.1 * 0.9)
		for c, k := range cnt {
			if math.Abs(float64(k)-float64(s.n)/10) > 5*sd {
				t.Errorf("%d images: class %d has %d", s.n, c, k)
			}
		}
	}
	// Pixels uniform over [0, 255]: mean 127.5 (standard error 0.03).
	var sum int
	for _, p := range ds.TrainX.Pixels {
		sum += int(p)
	}
	if m := float64(sum) / float64(len(ds.TrainX.Pixels)); math.Abs(m-127.5) > 0.5 {
		t.Errorf("pixel mean %v", m)
	}
	small := syntheticCIFAR10(7, 40, 20)
	if !slices.Equal(small.TrainX.Pixels, ds.TrainX.Pixels[:40*3072]) || !slices.Equal(small.TestY, ds.TestY[:20]) {
		t.Error("the small set is not the start of the full one")
	}
	// The normalisation of the pipeline accepts it.
	if _, err := small.TestX.Float32HWC(ds.Mean, ds.Std); err != nil {
		t.Error(err)
	}
}
