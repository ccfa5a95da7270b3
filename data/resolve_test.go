package data

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestResolveOrder(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	srcCopy := filepath.Join(filepath.Dir(self), MNIST) // the repository copy, data/mnist

	t.Chdir(t.TempDir())
	cwd, err := os.Getwd() // as Resolve sees it (symbolic links resolved)
	if err != nil {
		t.Fatal(err)
	}

	// 4. Nothing given and no ./data/mnist: the copy next to the source.
	t.Setenv(EnvVar, "")
	if got, err := Resolve("", MNIST); err != nil || got != srcCopy {
		t.Errorf("source copy: %q, %v; want %q", got, err, srcCopy)
	}
	// 3. ./data/mnist in the current directory comes before the source copy.
	local := filepath.Join(cwd, "data", MNIST)
	if err := os.MkdirAll(local, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Resolve("", MNIST); err != nil || got != local {
		t.Errorf("cwd copy: %q, %v; want %q", got, err, local)
	}
	// 2. SALSA_DATA comes before both, even if the folder does not exist.
	envRoot := filepath.Join(cwd, "absent-env-root")
	t.Setenv(EnvVar, envRoot)
	if got, err := Resolve("", MNIST); err != nil || got != filepath.Join(envRoot, MNIST) {
		t.Errorf("env: %q, %v", got, err)
	}
	// 1. --data comes first.
	if got, err := Resolve("../flag", FashionMNIST); err != nil || got != filepath.Join("../flag", FashionMNIST) {
		t.Errorf("flag: %q, %v", got, err)
	}
}

func TestResolveErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(EnvVar, "")
	// No repository copy of CIFAR-10 exists in either place.
	_, err := Resolve("", CIFAR10)
	if err == nil || !strings.Contains(err.Error(), "data: cifar-10-batches-bin: no data folder: --data is not given, SALSA_DATA is not set and no copy was found at ") {
		t.Errorf("error %v", err)
	}
	for _, name := range []string{"", ".", "..", "../mnist", "a/b", `a\b`} {
		if _, err := Resolve("root", name); err == nil || !strings.Contains(err.Error(), "must be a single folder name") {
			t.Errorf("name %q: error %v", name, err)
		}
	}
}
