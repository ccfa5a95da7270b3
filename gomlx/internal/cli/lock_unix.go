//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// lockFile is the file in an output directory that a salsa command holds
// an exclusive lock on while it writes there.
const lockFile = ".salsa.lock"

// lockDir creates dir if needed and takes an exclusive, non-blocking lock
// on dir/.salsa.lock for this process, so that two commands writing into
// one --out (two salsa compare, or a salsa train --resume beside another)
// do not interleave their logs and checkpoints. The operating system drops
// the lock when the process ends, however it ends. flag names the flag
// that gave dir, for the error.
func lockDir(flag, dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--%s %s: %w", flag, dir, err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--%s %s: %w", flag, dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "another salsa process"
			if b, rerr := os.ReadFile(path); rerr == nil && len(b) > 0 {
				who += " (pid " + string(b) + ")"
			}
			return nil, fmt.Errorf("--%s %s: %s is writing there (it holds %s): wait for it to end, or choose another directory", flag, dir, who, path)
		}
		return nil, fmt.Errorf("--%s %s: lock %s: %w", flag, dir, path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
	}
	return func() { f.Close() }, nil
}
