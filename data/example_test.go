package data_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/salsaopt/salsa/data"
)

// Reading a tiny IDX images file (magic 2051, one 1×3 image) and normalising
// it as MNIST is: (pixel/255 − 0.1307)/0.3081.
func Example() {
	idx := []byte{0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 128, 255}
	im, err := data.ReadIDXImages(bytes.NewReader(idx))
	if err != nil {
		log.Fatal(err)
	}
	x, err := im.Float32(data.MNISTMean, data.MNISTStd)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d image %d×%d: %.4f\n", im.N, im.Rows, im.Cols, x)
	// Output: 1 image 1×3: [-0.4242 1.2050 2.8215]
}

// Loading MNIST from --data, SALSA_DATA or the repository copy. (An error
// is printed, not fatal: a SALSA_DATA without mnist/ fails this example
// alone, not the package's other tests.)
func ExampleLoadMNIST() {
	dir, err := data.Resolve("", data.MNIST) // "" : no --data flag given
	if err != nil {
		fmt.Println(err)
		return
	}
	ds, err := data.LoadMNIST(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := ds.TrainX.Float32(ds.Mean, ds.Std)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("train %d, test %d, %d classes, %d features per image\n",
		ds.TrainX.N, ds.TestX.N, ds.Classes, len(x)/ds.TrainX.N)
	fmt.Println("first labels:", ds.TrainY[:10])
	// Output:
	// train 60000, test 10000, 10 classes, 784 features per image
	// first labels: [5 0 4 1 9 2 1 3 1 4]
}
