package data

import (
	"errors"
	"io/fs"
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
