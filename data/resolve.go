package data

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// EnvVar names the environment variable holding the data root.
const EnvVar = "SALSA_DATA"

// Resolve returns the folder of dataset name (e.g. [MNIST]), looking, in
// order, at:
//
//  1. flagDir/name, if flagDir (the --data flag) is not empty;
//  2. $SALSA_DATA/name, if SALSA_DATA is set and not empty;
//  3. ./data/name, relative to the current directory, if it exists (the
//     repository copy when run from the repository root);
//  4. name next to this package's source file, if that exists (the
//     repository copy under `go run` and `go test`, or a binary built
//     without -trimpath on the machine that built it);
//  5. name in shared/data beside the repository (../shared/data from its
//     root), where the project's shared datasets live, under the same
//     condition as step 4.
//
// Steps 1 and 2 are taken as given, existing or not, so that an explicit
// choice never silently falls back to another copy (and [Download] can fill
// a new folder); loading then reports a missing file. Only steps 3 to 5
// check for existence, and if no such folder exists Resolve fails.
func Resolve(flagDir, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("data: dataset name %q: must be a single folder name such as %q", name, MNIST)
	}
	if flagDir != "" {
		return filepath.Join(flagDir, name), nil
	}
	if env := os.Getenv(EnvVar); env != "" {
		return filepath.Join(env, name), nil
	}
	var tried []string
	for _, dir := range repoCandidates(name) {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir, nil
		}
		tried = append(tried, dir)
	}
	return "", fmt.Errorf("data: %s: no data folder: --data is not given, %s is not set and no copy was found at %s; %s",
		name, EnvVar, orList(tried), hint(name))
}

// repoCandidates lists steps 3 to 5 of Resolve, each folder once: run from
// the repository root, step 3's ./data/name is step 4's folder.
func repoCandidates(name string) []string {
	var dirs []string
	add := func(dir string) {
		if !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		add(filepath.Join(wd, "data", name))
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		add(filepath.Join(filepath.Dir(file), name))
		// The project's shared data beside the repository: ../shared/data.
		add(filepath.Join(filepath.Dir(file), "..", "..", "shared", "data", name))
	}
	return dirs
}

// orList joins paths as "a", "a or b", "a, b or c".
func orList(paths []string) string {
	if len(paths) < 2 {
		return strings.Join(paths, "")
	}
	return strings.Join(paths[:len(paths)-1], ", ") + " or " + paths[len(paths)-1]
}
