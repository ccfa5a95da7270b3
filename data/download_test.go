package data

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// server serves files by name and counts requests; other paths get 404.
type server struct {
	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := strings.TrimPrefix(r.URL.Path, "/mirror/")
	s.hits[name]++
	b, ok := s.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(b)
}

func newServer(t *testing.T, files map[string][]byte) (*server, string) {
	s := &server{files: files, hits: map[string]int{}}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL + "/mirror/"
}

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestDownload(t *testing.T) {
	a, b := []byte("first file"), []byte("second file, longer")
	reg := Registry{"fake": {
		{Name: "a.bin", Size: int64(len(a)), SHA256: sum(a)},
		{Name: "b.bin", Size: int64(len(b)), SHA256: sum(b)},
	}}
	ctx := context.Background()

	t.Run("ok, then kept", func(t *testing.T) {
		srv, url := newServer(t, map[string][]byte{"a.bin": a, "b.bin": b})
		dir := filepath.Join(t.TempDir(), "new", "fake")
		if err := reg.Download(ctx, nil, url, dir, "fake"); err != nil {
			t.Fatal(err)
		}
		if got := listDir(t, dir); !slices.Equal(got, []string{"a.bin", "b.bin"}) {
			t.Errorf("dir holds %v", got)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "b.bin")); string(got) != string(b) {
			t.Errorf("b.bin = %q", got)
		}
		// A second call finds both files good and fetches nothing.
		if err := reg.Download(ctx, nil, url, dir, "fake"); err != nil {
			t.Fatal(err)
		}
		if srv.hits["a.bin"] != 1 || srv.hits["b.bin"] != 1 {
			t.Errorf("hits %v, want one each", srv.hits)
		}
	})

	t.Run("bad local file replaced", func(t *testing.T) {
		_, url := newServer(t, map[string][]byte{"a.bin": a, "b.bin": b})
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "a.bin"), []byte("first filf"), 0o644)
		if err := reg.Download(ctx, nil, url, dir, "fake"); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "a.bin")); string(got) != string(a) {
			t.Errorf("a.bin = %q", got)
		}
	})

	for _, tc := range []struct {
		name  string
		serve []byte
		want  string
	}{
		{"corrupt", []byte("second file, LONGER"), "sha256 " + sum([]byte("second file, LONGER")) + " does not match the expected " + sum(b)},
		{"truncated", b[:5], "got 5 bytes, expected 19"},
		{"too long", append(slices.Clone(b), '!'), "more than the expected 19 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, url := newServer(t, map[string][]byte{"a.bin": a, "b.bin": tc.serve})
			dir := t.TempDir()
			err := reg.Download(ctx, nil, url, dir, "fake")
			if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "data: download fake: "+url+"b.bin: "+tc.want) {
				t.Errorf("error %v, want ErrChecksum with %q", err, tc.want)
			}
			// a.bin was good and stays; nothing of b.bin is left, not even a temporary file.
			if got := listDir(t, dir); !slices.Equal(got, []string{"a.bin"}) {
				t.Errorf("dir holds %v, want [a.bin]", got)
			}
		})
	}

	t.Run("404", func(t *testing.T) {
		_, url := newServer(t, map[string][]byte{"b.bin": b})
		dir := t.TempDir()
		err := reg.Download(ctx, nil, url, dir, "fake")
		if err == nil || !strings.Contains(err.Error(), "data: download fake: "+url+"a.bin: HTTP status 404 Not Found") {
			t.Errorf("error %v", err)
		}
		if got := listDir(t, dir); len(got) != 0 {
			t.Errorf("dir holds %v", got)
		}
		// A folder the call made is removed: Resolve would find it first.
		fresh := filepath.Join(t.TempDir(), "fake")
		if err := reg.Download(ctx, nil, url, fresh, "fake"); err == nil {
			t.Fatal("no error")
		}
		if _, err := os.Stat(fresh); !os.IsNotExist(err) {
			t.Errorf("the folder the failed download made is left: %v", err)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		_, url := newServer(t, map[string][]byte{"a.bin": a, "b.bin": b})
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := reg.Download(cctx, nil, url, t.TempDir(), "fake"); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			reg              Registry
			name, base, want string
		}{
			{reg, "other", "http://x", "data: download other: unknown dataset"},
			{reg, "fake", "", "data: download fake: no default mirror: give a base URL"},
			{Known, WikiText2, "http://x", "data: download wikitext-2: train.txt has no known size and SHA-256"},
			{Known, CIFAR10, "http://x", "data: download cifar-10-batches-bin: data_batch_1.bin has no known size and SHA-256"},
		} {
			err := tc.reg.Download(ctx, nil, tc.base, t.TempDir(), tc.name)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
			}
		}
	})
}

// The real MNIST files, served from the repository copy, download and verify
// with the Known registry.
func TestDownloadMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("copies 11.6 MB")
	}
	ts := httptest.NewServer(http.StripPrefix("/mnist", http.FileServer(http.Dir(MNIST))))
	defer ts.Close()
	dir := t.TempDir()
	if err := Download(context.Background(), ts.Client(), ts.URL+"/mnist", dir, MNIST); err != nil {
		t.Fatal(err)
	}
	// Download verified each file's size and SHA-256; check that all four are there.
	want := []string{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"}
	if got := listDir(t, dir); !slices.Equal(got, want) {
		t.Errorf("dir holds %v, want %v", got, want)
	}
}
