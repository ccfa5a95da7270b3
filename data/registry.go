package data

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Dataset folder names under a data root.
const (
	MNIST           = "mnist"
	FashionMNIST    = "fashion-mnist"
	CIFAR10         = "cifar-10-batches-bin"
	TinyShakespeare = "tinyshakespeare"
	WikiText2       = "wikitext-2"
)

// Default mirrors for [Download], by dataset. They are defaults only: pass
// another base URL to Download to use a different mirror. Every file fetched
// is checked against [Known], so a wrong mirror cannot plant a bad file.
const (
	// MNISTMirror is the mirror torchvision uses first for MNIST.
	MNISTMirror = "https://ossci-datasets.s3.amazonaws.com/mnist"
	// FashionMNISTMirror is the Zalando Research S3 bucket (HTTP only).
	FashionMNISTMirror = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com"
	// TinyShakespeareMirror is the char-rnn repository of A. Karpathy.
	TinyShakespeareMirror = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare"
)

// DefaultMirror returns the default mirror of a dataset, if it has one.
func DefaultMirror(name string) (string, bool) {
	switch name {
	case MNIST:
		return MNISTMirror, true
	case FashionMNIST:
		return FashionMNISTMirror, true
	case TinyShakespeare:
		return TinyShakespeareMirror, true
	}
	return "", false
}

// File describes one file of a dataset as distributed.
type File struct {
	Name   string // name inside the dataset folder
	Size   int64  // bytes; 0 if unknown
	SHA256 string // lowercase hex; "" if unknown (then never downloaded)

	// For a .gz file, the size and SHA-256 of its decompressed content,
	// which may stand in for it on disk under the name without ".gz".
	RawSize   int64
	RawSHA256 string
}

// Registry maps a dataset folder name to its files.
type Registry map[string][]File

// Known is the registry of the datasets this package loads. The MNIST,
// Fashion-MNIST, Tiny Shakespeare and WikiText-2 valid/test values are those of
// the project's offline copies, whose MD5s match the published ones; the
// CIFAR-10 sizes are 10,000 records of 3,073 bytes.
var Known = Registry{
	MNIST: {
		{"train-images-idx3-ubyte.gz", 9912422, "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
			47040016, "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"},
		{"train-labels-idx1-ubyte.gz", 28881, "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
			60008, "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"},
		{"t10k-images-idx3-ubyte.gz", 1648877, "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
			7840016, "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"},
		{"t10k-labels-idx1-ubyte.gz", 4542, "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
			10008, "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"},
	},
	FashionMNIST: {
		{"train-images-idx3-ubyte.gz", 26421880, "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
			47040016, "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888"},
		{"train-labels-idx1-ubyte.gz", 29515, "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
			60008, "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9"},
		{"t10k-images-idx3-ubyte.gz", 4422102, "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
			7840016, "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b"},
		{"t10k-labels-idx1-ubyte.gz", 5148, "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
			10008, "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34"},
	},
	CIFAR10: {
		{Name: "data_batch_1.bin", Size: cifarFileSize},
		{Name: "data_batch_2.bin", Size: cifarFileSize},
		{Name: "data_batch_3.bin", Size: cifarFileSize},
		{Name: "data_batch_4.bin", Size: cifarFileSize},
		{Name: "data_batch_5.bin", Size: cifarFileSize},
		{Name: "test_batch.bin", Size: cifarFileSize},
	},
	TinyShakespeare: {
		{Name: "input.txt", Size: 1115394, SHA256: "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"},
	},
	WikiText2: {
		// Size and SHA-256 of train.txt are unknown: the project's offline
		// copy lacks it. Zero and "" mean unknown, so a train.txt found on
		// disk is loaded without verification (only its UTF-8 is checked),
		// and Download refuses the dataset. The entries also describe the
		// release's names wiki.{train,valid,test}.tokens (see LoadWikiText2).
		{Name: "train.txt"},
		{Name: "valid.txt", Size: 1121681, SHA256: "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8"},
		{Name: "test.txt", Size: 1256449, SHA256: "d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0"},
	},
}

// ErrChecksum is wrapped by errors reporting a file whose size or SHA-256
// differs from the registry.
var ErrChecksum = errors.New("checksum mismatch")

// fileError is an error about one file of a dataset: what is wrong and what
// to do about it.
type fileError struct {
	dataset, path, msg, hint string
	kind                     error // ErrChecksum, fs.ErrNotExist or nil
}

func (e *fileError) Error() string {
	s := "data: " + e.dataset + ": " + e.path + ": " + e.msg
	if e.hint != "" {
		s += "; " + e.hint
	}
	return s
}

func (e *fileError) Unwrap() error { return e.kind }

// hint says how to get a good copy of a dataset.
func hint(name string) string {
	h := "point --data (or SALSA_DATA) at a data folder holding a good copy in " + name + "/"
	if _, ok := DefaultMirror(name); ok {
		h = "run with --download to fetch it, or " + h
	}
	return h
}

// file returns the registry entry of one file of a dataset.
func (r Registry) file(name, file string) (File, bool) {
	for _, f := range r[name] {
		if f.Name == file {
			return f, true
		}
	}
	return File{}, false
}

// FileDigest identifies one file a loader read: the path it was read from
// (the dataset folder as given, joined with the file name), its size and its
// SHA-256. For a .gz registry entry whose decompressed form was read instead,
// it is that of the decompressed file.
type FileDigest struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"` // lowercase hex
}

// read returns the content of dir/file after checking its size and SHA-256
// against the registry entry f (each only if known), with the digest of the
// file. For a .gz entry whose file is absent, the decompressed file is read
// and checked instead; the digest is that of the file actually read.
func (r Registry) read(dir, name string, f File) ([]byte, FileDigest, error) {
	path := filepath.Join(dir, f.Name)
	size, sum := f.Size, f.SHA256
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && strings.HasSuffix(f.Name, ".gz") {
		raw := filepath.Join(dir, strings.TrimSuffix(f.Name, ".gz"))
		if _, err := os.Stat(raw); !errors.Is(err, fs.ErrNotExist) {
			path, size, sum = raw, f.RawSize, f.RawSHA256
		} else {
			return nil, FileDigest{Path: path}, &fileError{name, path, "no such file (nor its decompressed form " + filepath.Base(raw) + ")", hint(name), fs.ErrNotExist}
		}
	}
	return readVerified(name, path, size, sum)
}

// checkDir reports a dataset folder that does not exist or is not a folder,
// naming it rather than the first file looked for in it.
func checkDir(name, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &fileError{name, dir, "no such folder", hint(name), fs.ErrNotExist}
	case err != nil:
		return &fileError{name, dir, osMsg(err), hint(name), nil}
	case !st.IsDir():
		return &fileError{name, dir, "not a folder", hint(name), nil}
	}
	return nil
}

// osMsg is the message of an error from package os without the path that a
// *fs.PathError repeats: a fileError names the path already.
func osMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readVerified reads path and checks its size and SHA-256, each only if known.
// It hashes the content once, whether or not the SHA-256 is known, and
// returns its digest.
func readVerified(name, path string, size int64, sum string) ([]byte, FileDigest, error) {
	d := FileDigest{Path: path}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, d, &fileError{name, path, "no such file", hint(name), fs.ErrNotExist}
	}
	if err != nil {
		return nil, d, &fileError{dataset: name, path: path, msg: osMsg(err)}
	}
	if !st.Mode().IsRegular() {
		return nil, d, &fileError{dataset: name, path: path, msg: "not a regular file"}
	}
	if size > 0 && st.Size() != size {
		return nil, d, &fileError{name, path,
			fmt.Sprintf("size %d bytes does not match the expected %d: the file is truncated or not the expected one", st.Size(), size),
			hint(name), ErrChecksum}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, d, &fileError{dataset: name, path: path, msg: osMsg(err)}
	}
	h := sha256.Sum256(b)
	d.Bytes, d.SHA256 = int64(len(b)), hex.EncodeToString(h[:])
	if sum != "" && d.SHA256 != sum {
		return nil, d, &fileError{name, path,
			fmt.Sprintf("sha256 %s does not match the expected %s: the file is corrupt or truncated", d.SHA256, sum),
			hint(name), ErrChecksum}
	}
	return b, d, nil
}
