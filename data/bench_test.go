package data

import "testing"

func BenchmarkLoadMNIST(b *testing.B) {
	for b.Loop() {
		if _, err := LoadMNIST(MNIST); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloat32MNISTTrain(b *testing.B) {
	ds, err := repoMNIST()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(ds.TrainX.Pixels)))
	for b.Loop() {
		if _, err := ds.TrainX.Float32(ds.Mean, ds.Std); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSyntheticCIFAR10(b *testing.B) {
	b.SetBytes(60000 * 3072)
	for b.Loop() {
		SyntheticCIFAR10(1)
	}
}
