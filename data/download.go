package data

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Download fetches the files of dataset name listed in [Known] into dir; see
// [Registry.Download].
func Download(ctx context.Context, client *http.Client, baseURL, dir, name string) error {
	return Known.Download(ctx, client, baseURL, dir, name)
}

// Download fetches each file of dataset name from baseURL/<file name> into
// dir (created if needed). baseURL "" means [DefaultMirror](name); client nil
// means http.DefaultClient. A file already in dir with the registered size and
// SHA-256 is kept. Each download goes to a temporary file in dir that is
// renamed into place only once its size and SHA-256 match the registry, so a
// failed or corrupt download leaves nothing behind (files completed before the
// failure stay). Datasets with a file of unknown checksum are refused.
func (r Registry) Download(ctx context.Context, client *http.Client, baseURL, dir, name string) error {
	files, ok := r[name]
	if !ok || len(files) == 0 {
		return fmt.Errorf("data: download %s: unknown dataset", name)
	}
	for _, f := range files {
		if f.SHA256 == "" || f.Size <= 0 {
			return fmt.Errorf("data: download %s: %s has no known size and SHA-256, so it cannot be verified; fetch %s yourself and point --data (or SALSA_DATA) at a folder holding %s/",
				name, f.Name, name, name)
		}
	}
	if baseURL == "" {
		if baseURL, ok = DefaultMirror(name); !ok {
			return fmt.Errorf("data: download %s: no default mirror: give a base URL", name)
		}
	}
	if client == nil {
		client = http.DefaultClient
	}
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data: download %s: %w", name, err)
	}
	for _, f := range files {
		dst := filepath.Join(dir, f.Name)
		if _, _, err := readVerified(name, dst, f.Size, f.SHA256); err == nil {
			continue
		}
		u := strings.TrimRight(baseURL, "/") + "/" + url.PathEscape(f.Name)
		if err := fetch(ctx, client, u, dst, f); err != nil {
			if os.IsNotExist(statErr) {
				// the folder this call made, if nothing was fetched into
				// it: left behind, Resolve would find it before a good copy
				_ = os.Remove(dir)
			}
			return fmt.Errorf("data: download %s: %s: %w", name, u, err)
		}
	}
	return nil
}

// fetch downloads u to dst through a temporary file, verifying it against f.
func fetch(ctx context.Context, client *http.Client, u, dst string, f File) (err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP status %s", resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+f.Name+".*.part")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, f.Size+1))
	if err != nil {
		return err
	}
	if n > f.Size {
		return fmt.Errorf("more than the expected %d bytes: %w", f.Size, ErrChecksum)
	}
	if n < f.Size {
		return fmt.Errorf("got %d bytes, expected %d: %w", n, f.Size, ErrChecksum)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return fmt.Errorf("sha256 %s does not match the expected %s: %w", got, f.SHA256, ErrChecksum)
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
