package train

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"testing"

	"github.com/salsaopt/salsa/data"
)

// Source.Files are the digests the loader recorded: those of the registry
// for the shared Tiny Shakespeare, the dataset's for images, nil for
// synthetic data.
func TestSourceFiles(t *testing.T) {
	if _, err := data.Resolve("", data.TinyShakespeare); err != nil {
		t.Skip(err)
	}
	src, err := Load(context.Background(), "", "tinyshakespeare", false, "", 1, io.Discard)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	f := data.Known[data.TinyShakespeare][0]
	got := src.Files()
	if len(got) != 1 || got[0].Bytes != f.Size || got[0].SHA256 != f.SHA256 || got[0].Path == "" {
		t.Errorf("files %+v, want one of %d bytes, sha256 %s", got, f.Size, f.SHA256)
	}

	want := []data.FileDigest{{Path: "a", Bytes: 1, SHA256: "00"}, {Path: "b", Bytes: 2, SHA256: "11"}}
	if got := (&Source{Images: &data.Dataset{Files: want}}).Files(); !slices.Equal(got, want) {
		t.Errorf("images: files %v, want %v", got, want)
	}
	if got := (&Source{Images: &data.Dataset{Name: data.SyntheticCIFAR10Name}}).Files(); got != nil {
		t.Errorf("synthetic: files %v, want nil", got)
	}
}
