package data

import (
	"bytes"
	"fmt"
)

// Dataset is an image-classification dataset split into train and test sets.
type Dataset struct {
	Name          string
	Classes       int // labels are in [0, Classes)
	TrainX, TestX *Images
	TrainY, TestY Labels
	Mean, Std     []float32 // usual per-channel normalisation, for Images.Float32 and Float32HWC; nil if none
	// Files are the digests of the files the loader read, in the order
	// read; nil for data not read from files ([SyntheticCIFAR10]).
	Files []FileDigest
}

// Usual normalisations (per channel, of pixel/255).
var (
	// MNISTMean and MNISTStd are the constants of PyTorch's MNIST example
	// (training-set mean 0.130660, std 0.308108).
	MNISTMean = []float32{0.1307}
	MNISTStd  = []float32{0.3081}
	// FashionMNISTMean and FashionMNISTStd are the training-set mean
	// (0.286041) and standard deviation (0.353024) to four digits.
	FashionMNISTMean = []float32{0.2860}
	FashionMNISTStd  = []float32{0.3530}
	// CIFAR10Mean and CIFAR10Std are the constants of kuangliu/pytorch-cifar,
	// the training code the paper cites for CIFAR-10.
	CIFAR10Mean = []float32{0.4914, 0.4822, 0.4465}
	CIFAR10Std  = []float32{0.2023, 0.1994, 0.2010}
)

// IDX file names of the MNIST-style datasets, without ".gz".
const (
	trainImages = "train-images-idx3-ubyte"
	trainLabels = "train-labels-idx1-ubyte"
	testImages  = "t10k-images-idx3-ubyte"
	testLabels  = "t10k-labels-idx1-ubyte"
)

// LoadMNIST loads MNIST from dir (the folder holding the four IDX files, .gz
// or decompressed), verifying each file against [Known] before parsing it.
func LoadMNIST(dir string) (*Dataset, error) {
	ds, err := Known.LoadIDX(dir, MNIST)
	if err != nil {
		return nil, err
	}
	ds.Mean, ds.Std = MNISTMean, MNISTStd
	return ds, nil
}

// LoadFashionMNIST loads Fashion-MNIST from dir like [LoadMNIST].
func LoadFashionMNIST(dir string) (*Dataset, error) {
	ds, err := Known.LoadIDX(dir, FashionMNIST)
	if err != nil {
		return nil, err
	}
	ds.Mean, ds.Std = FashionMNISTMean, FashionMNISTStd
	return ds, nil
}

// LoadIDX loads an MNIST-style dataset registered in r under name from dir:
// the files train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each as .gz (preferred)
// or decompressed, and each checked against r before parsing. Classes is one
// more than the largest label; Mean and Std are left nil.
func (r Registry) LoadIDX(dir, name string) (*Dataset, error) {
	if err := checkDir(name, dir); err != nil {
		return nil, err
	}
	ds := &Dataset{Name: name}
	var err error
	if ds.TrainX, err = r.idxImages(ds, dir, trainImages); err != nil {
		return nil, err
	}
	if ds.TrainY, err = r.idxLabels(ds, dir, trainLabels); err != nil {
		return nil, err
	}
	if ds.TestX, err = r.idxImages(ds, dir, testImages); err != nil {
		return nil, err
	}
	if ds.TestY, err = r.idxLabels(ds, dir, testLabels); err != nil {
		return nil, err
	}
	if err := ds.check(); err != nil {
		return nil, fmt.Errorf("data: %s: %s: %w", name, dir, err)
	}
	if ds.TrainX.N == 0 || ds.TestX.N == 0 {
		return nil, fmt.Errorf("data: %s: %s: %d training and %d test images: each split needs at least one", name, dir, ds.TrainX.N, ds.TestX.N)
	}
	// The classes are the training labels'; a test label outside them is
	// an error, not a class of its own.
	for _, y := range ds.TrainY {
		ds.Classes = max(ds.Classes, int(y)+1)
	}
	for i, y := range ds.TestY {
		if int(y) >= ds.Classes {
			return nil, fmt.Errorf("data: %s: %s: test label %d (example %d): the training labels are 0 to %d", name, dir, y, i, ds.Classes-1)
		}
	}
	return ds, nil
}

// check verifies that the labels match the images and that train and test
// images have the same shape.
func (ds *Dataset) check() error {
	if ds.TrainX.N != len(ds.TrainY) {
		return fmt.Errorf("%d training images but %d labels", ds.TrainX.N, len(ds.TrainY))
	}
	if ds.TestX.N != len(ds.TestY) {
		return fmt.Errorf("%d test images but %d labels", ds.TestX.N, len(ds.TestY))
	}
	a, b := ds.TrainX, ds.TestX
	if a.Channels != b.Channels || a.Rows != b.Rows || a.Cols != b.Cols {
		return fmt.Errorf("training images are %d×%d×%d but test images %d×%d×%d",
			a.Channels, a.Rows, a.Cols, b.Channels, b.Rows, b.Cols)
	}
	return nil
}

// idxBytes reads and verifies one IDX file of dataset ds.Name (base name
// without ".gz") and appends its digest to ds.Files.
func (r Registry) idxBytes(ds *Dataset, dir, base string) ([]byte, string, error) {
	name := ds.Name
	f, ok := r.file(name, base+".gz")
	if !ok {
		return nil, "", fmt.Errorf("data: %s: no registry entry for %s.gz", name, base)
	}
	b, d, err := r.read(dir, name, f)
	if err != nil {
		return nil, "", err
	}
	ds.Files = append(ds.Files, d)
	return b, d.Path, nil
}

func (r Registry) idxImages(ds *Dataset, dir, base string) (*Images, error) {
	b, path, err := r.idxBytes(ds, dir, base)
	if err != nil {
		return nil, err
	}
	dims, px, err := readIDX(bytes.NewReader(b), idxImagesMagic)
	if err != nil {
		return nil, &fileError{dataset: ds.Name, path: path, msg: "idx images: " + err.Error()}
	}
	return &Images{N: dims[0], Channels: 1, Rows: dims[1], Cols: dims[2], Pixels: px}, nil
}

func (r Registry) idxLabels(ds *Dataset, dir, base string) (Labels, error) {
	b, path, err := r.idxBytes(ds, dir, base)
	if err != nil {
		return nil, err
	}
	_, y, err := readIDX(bytes.NewReader(b), idxLabelsMagic)
	if err != nil {
		return nil, &fileError{dataset: ds.Name, path: path, msg: "idx labels: " + err.Error()}
	}
	return Labels(y), nil
}
