package data

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// sharedData returns the folder of dataset name in the project's shared data,
// or skips the test. It looks at $SALSA_DATA/name if SALSA_DATA is set, else
// at ../shared/data/name beside the repository: beside the first ancestor of
// the working directory (the package folder under go test) that has it, as
// internal/conformance finds ../shared/conformance.
func sharedData(t *testing.T, name string) string {
	t.Helper()
	if env := os.Getenv(EnvVar); env != "" {
		dir := filepath.Join(env, name)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Skipf("shared data not found: $%s is %q but %s is not a folder", EnvVar, env, dir)
		}
		return dir
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "..", "shared", "data", name)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skipf("shared data not found: $%s is not set and no ../shared/data/%s beside the repository (or any ancestor of the working directory)", EnvVar, name)
		}
		dir = parent
	}
}

var repoMNIST = sync.OnceValues(func() (*Dataset, error) { return LoadMNIST("mnist") })

// Reference values for the repository copy (data/mnist, identical to the
// shared copy ../shared/data/mnist beside the repository) from Python 3.11.2, reading the files with the
// gzip module only: first labels list(labels[8:28]), class counts
// collections.Counter(labels[8:]), pixel sums sum(images[16:]).
func TestLoadMNISTRepoCopy(t *testing.T) {
	ds, err := repoMNIST()
	if err != nil {
		t.Fatal(err)
	}
	if ds.Name != MNIST || ds.Classes != 10 {
		t.Errorf("name %q classes %d", ds.Name, ds.Classes)
	}
	for _, s := range []struct {
		x    *Images
		y    Labels
		n    int
		head []uint8
		cnt  []int
		sum  int
	}{
		{ds.TrainX, ds.TrainY, 60000,
			[]uint8{5, 0, 4, 1, 9, 2, 1, 3, 1, 4, 3, 5, 3, 6, 1, 7, 2, 8, 6, 9},
			[]int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}, 1567298545},
		{ds.TestX, ds.TestY, 10000,
			[]uint8{7, 2, 1, 0, 4, 1, 4, 9, 5, 9, 0, 6, 9, 0, 1, 5, 9, 7, 3, 4},
			[]int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}, 264923200},
	} {
		if s.x.N != s.n || s.x.Channels != 1 || s.x.Rows != 28 || s.x.Cols != 28 || len(s.x.Pixels) != s.n*784 || len(s.y) != s.n {
			t.Fatalf("shape %d×%d×%d×%d, %d labels; want %d×1×28×28", s.x.N, s.x.Channels, s.x.Rows, s.x.Cols, len(s.y), s.n)
		}
		if !slices.Equal(s.y[:20], s.head) {
			t.Errorf("first labels %v, want %v", s.y[:20], s.head)
		}
		cnt := make([]int, 10)
		for _, y := range s.y {
			cnt[y]++
		}
		if !slices.Equal(cnt, s.cnt) {
			t.Errorf("class counts %v, want %v", cnt, s.cnt)
		}
		sum := 0
		for _, p := range s.x.Pixels {
			sum += int(p)
		}
		if sum != s.sum {
			t.Errorf("pixel sum %d, want %d", sum, s.sum)
		}
	}
	// Row 14 of the first training image, from the same Python session.
	if got, want := hex.EncodeToString(ds.TrainX.Pixels[14*28:15*28]), "0000000000000000000000000051f0fdfd7719000000000000000000"; got != want {
		t.Errorf("image 0 row 14: %s, want %s", got, want)
	}
}

// The normalised training features have mean ≈ 0 and std ≈ 1: Python gives
// the training-set pixel mean 0.1306604762738429 and std 0.3081078038564627
// (of pixel/255), against the constants 0.1307 and 0.3081.
func TestMNISTNormalisation(t *testing.T) {
	ds, err := repoMNIST()
	if err != nil {
		t.Fatal(err)
	}
	x, err := ds.TrainX.Float32(ds.Mean, ds.Std)
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != 60000*784 {
		t.Fatalf("len %d", len(x))
	}
	var s, s2 float64
	for _, v := range x {
		s += float64(v)
		s2 += float64(v) * float64(v)
	}
	n := float64(len(x))
	mean := s / n
	std := math.Sqrt(s2/n - mean*mean)
	// numpy 1.24.2 on the float32 features (v/np.float32(255) − np.float32(0.1307))/np.float32(0.3081),
	// accumulated in float64: mean −0.0001282926419238658, std 1.0000254091313154.
	if wantMean, wantStd := -0.0001282926419238658, 1.0000254091313154; math.Abs(mean-wantMean) > 1e-9 || math.Abs(std-wantStd) > 1e-9 {
		t.Errorf("mean %.9f std %.9f, want %.9f %.9f", mean, std, wantMean, wantStd)
	}
}

// First labels of Fashion-MNIST, from Python 3.11.2 with the gzip module.
func TestLoadFashionMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 30 MB")
	}
	ds, err := LoadFashionMNIST(sharedData(t, FashionMNIST))
	if err != nil {
		t.Fatal(err)
	}
	if ds.TrainX.N != 60000 || ds.TestX.N != 10000 || ds.Classes != 10 || ds.TrainX.Rows != 28 {
		t.Errorf("sizes %d, %d, classes %d", ds.TrainX.N, ds.TestX.N, ds.Classes)
	}
	if want := []uint8{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}; !slices.Equal(ds.TrainY[:10], want) {
		t.Errorf("train labels %v, want %v", ds.TrainY[:10], want)
	}
	if want := []uint8{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}; !slices.Equal(ds.TestY[:10], want) {
		t.Errorf("test labels %v, want %v", ds.TestY[:10], want)
	}
}

// fakeIDX writes a tiny MNIST-style dataset to dir (gzip or raw files) and
// returns a registry "fake" describing it.
func fakeIDX(t *testing.T, dir string, raw bool) Registry {
	t.Helper()
	files := map[string][]byte{
		trainImages: idxFile(2051, []uint32{3, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
		trainLabels: idxFile(2049, []uint32{3}, []byte{0, 1, 2}),
		testImages:  idxFile(2051, []uint32{1, 2, 2}, []byte{13, 14, 15, 16}),
		testLabels:  idxFile(2049, []uint32{1}, []byte{1}),
	}
	var reg []File
	for _, base := range []string{trainImages, trainLabels, testImages, testLabels} {
		b := files[base]
		z := gz(t, b)
		reg = append(reg, File{Name: base + ".gz", Size: int64(len(z)), SHA256: sum(z), RawSize: int64(len(b)), RawSHA256: sum(b)})
		name, content := base+".gz", z
		if raw {
			name, content = base, b
		}
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Registry{"fake": reg}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestLoadIDXFake(t *testing.T) {
	for _, raw := range []bool{false, true} {
		dir := t.TempDir()
		reg := fakeIDX(t, dir, raw)
		ds, err := reg.LoadIDX(dir, "fake")
		if err != nil {
			t.Fatalf("raw=%v: %v", raw, err)
		}
		if ds.TrainX.N != 3 || ds.TestX.N != 1 || ds.Classes != 3 || !slices.Equal(ds.TestX.Pixels, []uint8{13, 14, 15, 16}) {
			t.Errorf("raw=%v: %+v", raw, ds)
		}
	}
}

func TestLoadIDXErrors(t *testing.T) {
	t.Run("corrupt", func(t *testing.T) {
		dir := t.TempDir()
		reg := fakeIDX(t, dir, false)
		p := filepath.Join(dir, trainLabels+".gz")
		b, _ := os.ReadFile(p)
		b[len(b)/2] ^= 1
		os.WriteFile(p, b, 0o644)
		_, err := reg.LoadIDX(dir, "fake")
		if !errors.Is(err, ErrChecksum) {
			t.Fatalf("error %v, want ErrChecksum", err)
		}
		for _, s := range []string{"data: fake: " + p + ": sha256 " + sum(b) + " does not match the expected " + reg["fake"][1].SHA256,
			"the file is corrupt or truncated", "point --data (or SALSA_DATA)"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q lacks %q", err, s)
			}
		}
	})
	t.Run("truncated raw", func(t *testing.T) {
		dir := t.TempDir()
		reg := fakeIDX(t, dir, true)
		p := filepath.Join(dir, testImages)
		os.WriteFile(p, idxFile(2051, []uint32{1, 2, 2}, []byte{13, 14, 15}), 0o644)
		_, err := reg.LoadIDX(dir, "fake")
		if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), p+": size 19 bytes does not match the expected 20") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		reg := fakeIDX(t, dir, false)
		p := filepath.Join(dir, testLabels+".gz")
		os.Remove(p)
		_, err := reg.LoadIDX(dir, "fake")
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "data: fake: "+p+": no such file") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("counts disagree", func(t *testing.T) {
		// A registry that vouches for inconsistent files: the loader still
		// checks that labels match images.
		dir := t.TempDir()
		reg := fakeIDX(t, dir, true)
		b := idxFile(2049, []uint32{2}, []byte{0, 1})
		os.WriteFile(filepath.Join(dir, trainLabels), b, 0o644)
		reg["fake"][1].RawSize, reg["fake"][1].RawSHA256 = int64(len(b)), sum(b)
		_, err := reg.LoadIDX(dir, "fake")
		if err == nil || !strings.Contains(err.Error(), "3 training images but 2 labels") {
			t.Errorf("error %v", err)
		}
	})
	// A registry that vouches for a test label the training labels lack, or
	// for an empty split: refused, not a class of its own or an empty run.
	for _, tc := range []struct {
		name, file string
		content    []byte
		want       string
	}{
		{"test label outside the training labels", testLabels, idxFile(2049, []uint32{1}, []byte{255}), "test label 255 (example 0): the training labels are 0 to 2"},
		{"no training images", trainImages, idxFile(2051, []uint32{0, 2, 2}, nil), "0 training and 1 test images"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			reg := fakeIDX(t, dir, true)
			os.WriteFile(filepath.Join(dir, tc.file), tc.content, 0o644)
			for i, f := range reg["fake"] {
				if f.Name == tc.file+".gz" {
					reg["fake"][i].RawSize, reg["fake"][i].RawSHA256 = int64(len(tc.content)), sum(tc.content)
				}
			}
			if tc.file == trainImages { // and no labels to match
				b := idxFile(2049, []uint32{0}, nil)
				os.WriteFile(filepath.Join(dir, trainLabels), b, 0o644)
				reg["fake"][1].RawSize, reg["fake"][1].RawSHA256 = int64(len(b)), sum(b)
			}
			_, err := reg.LoadIDX(dir, "fake")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("mnist hint", func(t *testing.T) {
		dir := t.TempDir()
		_, err := LoadMNIST(dir)
		want := "data: mnist: " + filepath.Join(dir, "train-images-idx3-ubyte.gz") + ": no such file (nor its decompressed form train-images-idx3-ubyte); run with --download to fetch it, or point --data (or SALSA_DATA) at a data folder holding a good copy in mnist/"
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	})
}
