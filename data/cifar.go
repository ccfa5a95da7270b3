package data

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// CIFAR-10 binary records: 1 label byte, then 3×32×32 pixel bytes (CHW).
const (
	cifarRecord   = 1 + 3*32*32
	cifarFileSize = 10000 * cifarRecord
	cifarTest     = "test_batch.bin"
)

// LoadCIFAR10 loads the binary version of CIFAR-10 from dir (the
// cifar-10-batches-bin folder): data_batch_1.bin to data_batch_5.bin for
// training, in that order, and test_batch.bin. No checksum is known for these
// files; each must be 10,000 records of 3,073 bytes with labels in [0, 10).
func LoadCIFAR10(dir string) (*Dataset, error) {
	return Known.loadCIFAR10(dir)
}

func (r Registry) loadCIFAR10(dir string) (*Dataset, error) {
	if err := checkDir(CIFAR10, dir); err != nil {
		return nil, err
	}
	ds := &Dataset{Name: CIFAR10, Classes: 10, Mean: CIFAR10Mean, Std: CIFAR10Std,
		TrainX: &Images{Channels: 3, Rows: 32, Cols: 32}, TestX: &Images{Channels: 3, Rows: 32, Cols: 32}}
	nTrain := 0
	for _, f := range r[CIFAR10] {
		if f.Name != cifarTest {
			nTrain++
		}
	}
	for _, f := range r[CIFAR10] {
		b, d, err := r.read(dir, CIFAR10, f)
		if err != nil {
			return nil, err
		}
		ds.Files = append(ds.Files, d)
		x, y, files := ds.TrainX, &ds.TrainY, nTrain
		if f.Name == cifarTest {
			x, y, files = ds.TestX, &ds.TestY, 1
		}
		if err := appendCIFAR(x, y, b, files); err != nil {
			return nil, &fileError{dataset: CIFAR10, path: d.Path, msg: err.Error(), hint: hint(CIFAR10)}
		}
	}
	if ds.TrainX.N == 0 || ds.TestX.N == 0 {
		return nil, fmt.Errorf("data: %s: %s: the registry lists no training or no test file", CIFAR10, dir)
	}
	return ds, nil
}

// appendCIFAR appends the records of one CIFAR-10 binary file to x and y,
// reserving room for files such files on the first call.
func appendCIFAR(x *Images, y *Labels, b []byte, files int) error {
	if len(b) == 0 || len(b)%cifarRecord != 0 {
		return fmt.Errorf("size %d bytes: must be a positive multiple of the %d-byte record", len(b), cifarRecord)
	}
	n := len(b) / cifarRecord
	if x.Pixels == nil {
		x.Pixels = make([]uint8, 0, files*n*(cifarRecord-1))
	}
	for i := range n {
		rec := b[i*cifarRecord : (i+1)*cifarRecord]
		if rec[0] >= 10 {
			return fmt.Errorf("record %d: label %d: must be in [0, 10)", i, rec[0])
		}
		*y = append(*y, rec[0])
		x.Pixels = append(x.Pixels, rec[1:]...)
	}
	x.N += n
	return nil
}

// SyntheticCIFAR10Name is the Name of the [Dataset] that [SyntheticCIFAR10]
// returns.
const SyntheticCIFAR10Name = "synthetic-cifar-10"

// SyntheticCIFAR10 returns random data of CIFAR-10's shape and size, for
// runs and timings without the real files: 50,000 training and 10,000 test
// images of 3×32×32 uint8 pixels (CHW, as [LoadCIFAR10] stores them; 184 MB
// in all), 10 classes, and the Mean and Std of the real dataset
// ([CIFAR10Mean], [CIFAR10Std]) so that a pipeline treats it alike. Nothing
// in it is learnable: labels are independent of pixels.
//
// It is a function of seed alone. The training set comes from
// rand.New(rand.NewPCG(seed, 1)) and the test set from
// rand.New(rand.NewPCG(seed, 2)); for each image in turn, the label is
// r.IntN(10) (uniform over the classes) and then its 3,072 pixels are the
// bytes of 384 values of r.Uint64(), each little-endian. Pixels are thus
// uniform over [0, 255] (mean 127.5/255 ≈ 0.5 after scaling, not CIFAR-10's
// [CIFAR10Mean]).
func SyntheticCIFAR10(seed uint64) *Dataset {
	return syntheticCIFAR10(seed, 50000, 10000)
}

// syntheticCIFAR10 is SyntheticCIFAR10 with nTrain and nTest images; its
// images are the first of SyntheticCIFAR10's.
func syntheticCIFAR10(seed uint64, nTrain, nTest int) *Dataset {
	ds := &Dataset{Name: SyntheticCIFAR10Name, Classes: 10, Mean: CIFAR10Mean, Std: CIFAR10Std}
	ds.TrainX, ds.TrainY = syntheticImages(rand.NewPCG(seed, 1), nTrain)
	ds.TestX, ds.TestY = syntheticImages(rand.NewPCG(seed, 2), nTest)
	return ds
}

func syntheticImages(src *rand.PCG, n int) (*Images, Labels) {
	const dim = cifarRecord - 1 // 3072, a multiple of 8
	r := rand.New(src)          // r.Uint64() is src.Uint64(): one stream
	x := &Images{N: n, Channels: 3, Rows: 32, Cols: 32, Pixels: make([]uint8, n*dim)}
	y := make(Labels, n)
	for i := range n {
		y[i] = uint8(r.IntN(10))
		px := x.Pixels[i*dim : (i+1)*dim]
		for j := 0; j < dim; j += 8 {
			// src directly rather than through r: no interface call.
			binary.LittleEndian.PutUint64(px[j:], src.Uint64())
		}
	}
	return x, y
}
