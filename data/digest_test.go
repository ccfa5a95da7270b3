package data

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The digests of the shared MNIST are the registry's, in the order read.
func TestFilesMNIST(t *testing.T) {
	dir := sharedData(t, MNIST)
	ds, err := LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []FileDigest
	for _, name := range []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"} {
		f, ok := Known.file(MNIST, name)
		if !ok {
			t.Fatalf("no registry entry for %s", name)
		}
		want = append(want, FileDigest{Path: filepath.Join(dir, name), Bytes: f.Size, SHA256: f.SHA256})
	}
	if !slices.Equal(ds.Files, want) {
		t.Errorf("files\n%v\nwant\n%v", ds.Files, want)
	}
}

// A file whose SHA-256 the registry does not know is hashed all the same.
func TestFilesTinyShakespeare(t *testing.T) {
	dir := t.TempDir()
	text := "First Citizen:\nBefore we proceed\n"
	if err := os.WriteFile(filepath.Join(dir, "input.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Registry{TinyShakespeare: {{Name: "input.txt"}}}.loadTinyShakespeare(dir)
	if err != nil {
		t.Fatal(err)
	}
	// printf 'First Citizen:\nBefore we proceed\n' | sha256sum
	want := []FileDigest{{Path: filepath.Join(dir, "input.txt"), Bytes: 33,
		SHA256: "061457e9e3d60cf1084dda7b852f6f96885083ec9d162ba04f4ceb0b30b59c92"}}
	if !slices.Equal(c.Files, want) {
		t.Errorf("files %v, want %v", c.Files, want)
	}
}

// For a .gz entry the digest is that of the file read: the .gz, or the
// decompressed file standing in for it.
func TestFilesIDX(t *testing.T) {
	for _, raw := range []bool{false, true} {
		dir := t.TempDir()
		reg := fakeIDX(t, dir, raw)
		ds, err := reg.LoadIDX(dir, "fake")
		if err != nil {
			t.Fatal(err)
		}
		var want []FileDigest
		for _, f := range reg["fake"] {
			d := FileDigest{Path: filepath.Join(dir, f.Name), Bytes: f.Size, SHA256: f.SHA256}
			if raw {
				d = FileDigest{Path: filepath.Join(dir, strings.TrimSuffix(f.Name, ".gz")), Bytes: f.RawSize, SHA256: f.RawSHA256}
			}
			want = append(want, d)
		}
		if !slices.Equal(ds.Files, want) {
			t.Errorf("raw=%v: files\n%v\nwant\n%v", raw, ds.Files, want)
		}
	}
}

func TestFilesCIFAR10AndWikiText2(t *testing.T) {
	dir := t.TempDir()
	var reg []File
	var want []FileDigest
	for i, name := range []string{"data_batch_1.bin", "data_batch_2.bin", "test_batch.bin"} {
		b := cifarRecords(i, 1+i)
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		reg = append(reg, File{Name: name})
		want = append(want, FileDigest{Path: p, Bytes: int64(len(b)), SHA256: sum(b)})
	}
	ds, err := Registry{CIFAR10: reg}.loadCIFAR10(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Files, want) {
		t.Errorf("cifar files\n%v\nwant\n%v", ds.Files, want)
	}

	// The release's names, read in the order train, valid, test.
	dir = t.TempDir()
	want = nil
	for _, s := range [][2]string{{"wiki.train.tokens", " a b \n"}, {"valid.txt", " b c \n"}, {"wiki.test.tokens", " c \n"}} {
		p := filepath.Join(dir, s[0])
		os.WriteFile(p, []byte(s[1]), 0o644)
		want = append(want, FileDigest{Path: p, Bytes: int64(len(s[1])), SHA256: sum([]byte(s[1]))})
	}
	c, err := Registry{WikiText2: {{Name: "train.txt"}, {Name: "valid.txt"}, {Name: "test.txt"}}}.loadWikiText2(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Files, want) {
		t.Errorf("wikitext files\n%v\nwant\n%v", c.Files, want)
	}

	if ds := syntheticCIFAR10(1, 2, 1); ds.Files != nil {
		t.Errorf("synthetic files %v, want nil", ds.Files)
	}
}

// Every not-found message names each path once and says what to do.
func TestNotFoundNamesPathOnce(t *testing.T) {
	once := func(t *testing.T, err error, path string) {
		t.Helper()
		if err == nil {
			t.Fatalf("no error; want one naming %s", path)
		}
		msg := err.Error()
		if n := strings.Count(msg, path); n != 1 {
			t.Errorf("%s appears %d times in %q", path, n, msg)
		}
		if !strings.Contains(msg, "--data") || !strings.Contains(msg, EnvVar) {
			t.Errorf("%q does not say to use --data or %s", msg, EnvVar)
		}
	}

	// Resolve run from the repository root, where ./data/name is also the
	// folder beside the source: each folder tried is named once.
	t.Run("resolve", func(t *testing.T) {
		_, self, _, _ := runtime.Caller(0)
		t.Chdir(filepath.Dir(filepath.Dir(self)))
		t.Setenv(EnvVar, "")
		const name = "no-such-dataset"
		_, err := Resolve("", name)
		once(t, err, filepath.Join(filepath.Dir(self), name))
		for _, dir := range repoCandidates(name) {
			once(t, err, dir)
		}
	})

	type loader struct {
		folder string
		load   func(string) error
	}
	loaders := []loader{
		{MNIST, func(d string) error { _, err := LoadMNIST(d); return err }},
		{FashionMNIST, func(d string) error { _, err := LoadFashionMNIST(d); return err }},
		{CIFAR10, func(d string) error { _, err := LoadCIFAR10(d); return err }},
		{TinyShakespeare, func(d string) error { _, err := LoadTinyShakespeare(d); return err }},
		{WikiText2, func(d string) error { _, err := LoadWikiText2(d); return err }},
	}
	for _, l := range loaders {
		t.Run(l.folder, func(t *testing.T) {
			root := t.TempDir()
			// --data (or SALSA_DATA) naming a folder that does not exist.
			dir := filepath.Join(root, "absent", l.folder)
			err := l.load(dir)
			once(t, err, dir)
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%v does not wrap fs.ErrNotExist", err)
			}
			if _, ok := DefaultMirror(l.folder); ok != strings.Contains(err.Error(), "--download") {
				t.Errorf("%q: mentions --download %v, mirror %v", err, !ok, ok)
			}
			// A data root that is a file: the stat error must not repeat
			// the path.
			file := filepath.Join(root, "file")
			os.WriteFile(file, nil, 0o644)
			dir = filepath.Join(file, l.folder)
			once(t, l.load(dir), dir)
		})
	}

	// A file that cannot be stat'ed (a symbolic link to itself).
	t.Run("loop", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "input.txt")
		if err := os.Symlink(p, p); err != nil {
			t.Skip(err)
		}
		_, err := LoadTinyShakespeare(dir)
		if err == nil || strings.Count(err.Error(), p) != 1 {
			t.Errorf("error %v: want %s named once", err, p)
		}
	})
}
