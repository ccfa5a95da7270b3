package data

import (
	"fmt"
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
	ds := &Dataset{Name: CIFAR10, Classes: 10, Mean: CIFAR10Mean, Std: CIFAR10Std,
		TrainX: &Images{Channels: 3, Rows: 32, Cols: 32}, TestX: &Images{Channels: 3, Rows: 32, Cols: 32}}
	nTrain := 0
	for _, f := range r[CIFAR10] {
		if f.Name != cifarTest {
			nTrain++
		}
	}
	for _, f := range r[CIFAR10] {
		b, path, err := r.read(dir, CIFAR10, f)
		if err != nil {
			return nil, err
		}
		x, y, files := ds.TrainX, &ds.TrainY, nTrain
		if f.Name == cifarTest {
			x, y, files = ds.TestX, &ds.TestY, 1
		}
		if err := appendCIFAR(x, y, b, files); err != nil {
			return nil, &fileError{dataset: CIFAR10, path: path, msg: err.Error(), hint: hint(CIFAR10)}
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
