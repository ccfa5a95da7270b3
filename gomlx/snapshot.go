package salsagomlx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/salsaopt/salsa/direction"
)

const (
	snapshotMagic   = "salsagomlx\x00"
	snapshotVersion = 2
	// snapshotVersionHost is the version of a Host direction's snapshot:
	// version 2 followed by the direction's and the average's own
	// snapshots (each a uint64 length, 0 before the first update, and the
	// bytes of its MarshalBinary).
	snapshotVersionHost = 3
	// snapshotVersionHostFlags is version 3 followed by the paths of the
	// model's non-trainable variables (a uint32 count, then each path as a
	// uint32 length and its bytes), so that a fresh trainer restored from
	// it knows them (batch-norm statistics) before its first graph: the host
	// direction's parameters and an evaluation's running statistics are
	// found by that flag. Version 3 is still read, every model variable
	// then trainable until a graph is built.
	snapshotVersionHostFlags = 4
)

// snapshotVars lists the variables a snapshot holds, in store order: every
// variable under /model, the direction's state, the store's RNG state, a
// recurrent model's carried state and the copies kept for a rollback (not
// the learning rate, saved as a float64, nor the scratch values kept
// between Grad and Update).
func (t *Trainer) snapshotVars() []*model.Variable {
	var vs []*model.Variable
	for v := range t.store.IterVariables() {
		if snapshotPath(v.Path()) {
			vs = append(vs, v)
		}
	}
	return vs
}

func snapshotPath(p string) bool {
	if strings.HasPrefix(p, "/model/") || copyPath(p) || averagePath(p) || p == rngPath || p == statePath {
		return true
	}
	for _, sc := range directionState {
		if p == sc || strings.HasPrefix(p, sc+"/") {
			return true
		}
	}
	return false
}

// MarshalBinary writes a versioned snapshot of the trainer between steps:
// the direction kind, the learning rate, and the bytes of every variable
// under /model, of the direction's state (QHM's h; Adam's m, v, t), of the
// store's RNG state (dropout masks), of a recurrent model's carried
// state and of the copies of the parameters kept for a rollback
// ([schedule.Result.Save], [schedule.Result.Confirm]).
// [Trainer.UnmarshalBinary] on a trainer built with the same model and
// Config restores it so that training continues bit for bit. The model's
// variables exist once a step (or Evaluate) has run; before that there is
// nothing to save and MarshalBinary returns an error.
func (t *Trainer) MarshalBinary() ([]byte, error) {
	if t.avg.on {
		return nil, errors.New("salsagomlx: snapshot between BeginAverage and EndAverage")
	}
	vs := t.snapshotVars()
	nModel := 0
	for _, v := range vs {
		if strings.HasPrefix(v.Path(), "/model/") {
			nModel++
		}
	}
	if nModel == 0 {
		return nil, errors.New("salsagomlx: snapshot: the model has no variables yet (they are created by the first step)")
	}
	// The buffer is sized once: growing it by doubling to the size of the
	// parameters (up to three times that with the copies) costs more than the copy.
	size := len(snapshotMagic) + 4 + 4 + 8 + 4
	for _, v := range vs {
		sh := v.Shape()
		size += 4 + len(v.Path()) + 4 + 4 + 8*sh.Rank() + 8 + int(sh.ByteSize())
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(snapshotMagic)
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	wPath := func(p string) { w(uint32(len(p))); b.WriteString(p) }
	version := uint32(snapshotVersion)
	if t.cfg.Direction == Host {
		version = snapshotVersionHostFlags
	}
	w(version)
	w(uint32(t.cfg.Direction))
	w(t.lr)
	w(uint32(len(vs)))
	for _, v := range vs {
		val, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("salsagomlx: snapshot of %s: %w", v.Path(), err)
		}
		sh := val.Shape()
		wPath(v.Path())
		w(uint32(sh.DType))
		w(uint32(sh.Rank()))
		for _, d := range sh.Dimensions {
			w(uint64(d))
		}
		err = val.ConstBytes(func(data []byte) {
			w(uint64(len(data)))
			b.Write(data)
		})
		if err != nil {
			return nil, fmt.Errorf("salsagomlx: snapshot of %s: %w", v.Path(), err)
		}
	}
	if t.cfg.Direction == Host {
		var blobs [2][]byte
		var err error
		if t.host.dir != nil {
			if blobs[0], err = t.host.dir.MarshalBinary(); err != nil {
				return nil, fmt.Errorf("salsagomlx: snapshot of the host direction: %w", err)
			}
		}
		if t.host.avg != nil {
			if blobs[1], err = t.host.avg.MarshalBinary(); err != nil {
				return nil, fmt.Errorf("salsagomlx: snapshot of the host average: %w", err)
			}
		}
		for _, blob := range blobs {
			w(uint64(len(blob)))
			b.Write(blob)
		}
		var fixed []string
		for _, v := range vs {
			if strings.HasPrefix(v.Path(), "/model/") && !v.Trainable {
				fixed = append(fixed, v.Path())
			}
		}
		w(uint32(len(fixed)))
		for _, p := range fixed {
			wPath(p)
		}
	}
	return b.Bytes(), nil
}

// UnmarshalBinary restores a snapshot of [Trainer.MarshalBinary]. It checks
// the whole snapshot before changing anything: the version, the direction,
// and that each variable the trainer already has matches the snapshot's in
// dtype and shape. Variables the trainer has not created yet (a fresh
// trainer) are created with the snapshot's values; a copy of the
// parameters (kept or candidate) that the snapshot predates is deleted.
func (t *Trainer) UnmarshalBinary(data []byte) error {
	r := bytes.NewReader(data)
	fail := func(what string) error {
		return fmt.Errorf("salsagomlx: snapshot: %s (offset %d of %d bytes)", what, len(data)-r.Len(), len(data))
	}
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapshotMagic {
		return fail("not a salsagomlx snapshot")
	}
	var version, dir, nv uint32
	var lr float64
	rd := func(v any) bool { return binary.Read(r, binary.LittleEndian, v) == nil }
	// rdPath reads a path as MarshalBinary writes it: a uint32 length, the bytes.
	rdPath := func() (string, bool) {
		var pl uint32
		if !rd(&pl) || int64(pl) > int64(r.Len()) {
			return "", false
		}
		pb := make([]byte, pl)
		if _, err := io.ReadFull(r, pb); err != nil {
			return "", false
		}
		return string(pb), true
	}
	if !rd(&version) {
		return fail("truncated")
	}
	host := version == snapshotVersionHost || version == snapshotVersionHostFlags
	if version != snapshotVersion && !host {
		return fmt.Errorf("salsagomlx: snapshot version %d: this build reads %d, %d and %d", version, snapshotVersion, snapshotVersionHost, snapshotVersionHostFlags)
	}
	if !rd(&dir) || !rd(&lr) || !rd(&nv) {
		return fail("truncated")
	}
	if Direction(dir) != t.cfg.Direction {
		return fmt.Errorf("salsagomlx: snapshot direction %s: the trainer's is %s", Direction(dir), t.cfg.Direction)
	}
	if host != (t.cfg.Direction == Host) {
		return fail(fmt.Sprintf("version %d for direction %s", version, t.cfg.Direction))
	}
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fail(fmt.Sprintf("lr = %v: must be finite and > 0", lr))
	}
	type entry struct {
		path string
		val  *tensors.Tensor
	}
	entries := make([]entry, 0, nv)
	seen := map[string]bool{}
	for i := uint32(0); i < nv; i++ {
		var dt, rank uint32
		path, ok := rdPath()
		if !ok {
			return fail("truncated")
		}
		if !snapshotPath(path) || seen[path] {
			return fail(fmt.Sprintf("variable %q: unexpected or repeated", path))
		}
		seen[path] = true
		if !rd(&dt) || !rd(&rank) || rank > 16 {
			return fail(fmt.Sprintf("variable %q: bad header", path))
		}
		dims := make([]int, rank)
		for k := range dims {
			var d uint64
			if !rd(&d) || d > math.MaxInt32 {
				return fail(fmt.Sprintf("variable %q: bad dimensions", path))
			}
			dims[k] = int(d)
		}
		dtype := dtypes.DType(dt)
		if dtype != dtypes.Float32 && dtype != dtypes.Float64 && dtype != dtypes.Int64 && dtype != dtypes.Uint64 {
			return fail(fmt.Sprintf("variable %q: dtype %s: must be Float32, Float64, Int64 or Uint64", path, dtype))
		}
		sh := shapes.Make(dtype, dims...)
		var nb uint64
		if !rd(&nb) || nb > uint64(r.Len()) {
			return fail(fmt.Sprintf("variable %q: truncated", path))
		}
		if nb != uint64(sh.ByteSize()) {
			return fail(fmt.Sprintf("variable %q: %d bytes for shape %s", path, nb, sh))
		}
		if v := t.store.GetVariable(path); v != nil && !v.Shape().Equal(sh) {
			return fmt.Errorf("salsagomlx: snapshot variable %s has shape %s: the trainer's is %s", path, sh, v.Shape())
		}
		val := tensors.FromShape(sh)
		var rerr error
		if err := val.MutableBytes(func(b []byte) { _, rerr = io.ReadFull(r, b) }); err != nil || rerr != nil {
			return fail(fmt.Sprintf("variable %q: truncated", path))
		}
		entries = append(entries, entry{path, val})
	}
	var hostDir direction.LRAware[float32]
	var hostAvg *direction.PolyAverage[float32]
	var fixed map[string]bool // the model's non-trainable variables (version 4)
	if host {
		var blobs [2][]byte
		for i := range blobs {
			var nb uint64
			if !rd(&nb) || nb > uint64(r.Len()) {
				return fail("host direction: truncated")
			}
			blobs[i] = make([]byte, nb)
			if _, err := io.ReadFull(r, blobs[i]); err != nil {
				return fail("host direction: truncated")
			}
		}
		if len(blobs[0]) > 0 {
			// The snapshot's direction replaces the one New builds, its
			// configuration and size included.
			d, err := t.cfg.Host.New(1)
			if err != nil {
				return fmt.Errorf("salsagomlx: snapshot: host direction: %w", err)
			}
			if err := d.UnmarshalBinary(blobs[0]); err != nil {
				return fmt.Errorf("salsagomlx: snapshot: host direction: %w", err)
			}
			hostDir = d
		}
		if len(blobs[1]) > 0 {
			if !t.cfg.Host.Average {
				return fail("an iterate average for a trainer without one")
			}
			hostAvg = new(direction.PolyAverage[float32])
			if err := hostAvg.UnmarshalBinary(blobs[1]); err != nil {
				return fmt.Errorf("salsagomlx: snapshot: host average: %w", err)
			}
		}
		if version == snapshotVersionHostFlags {
			var n uint32
			if !rd(&n) || int64(n) > int64(r.Len()) {
				return fail("non-trainable variables: truncated")
			}
			fixed = map[string]bool{}
			for range n {
				p, ok := rdPath()
				if !ok {
					return fail("non-trainable variables: truncated")
				}
				if !seen[p] || !strings.HasPrefix(p, "/model/") || fixed[p] {
					return fail(fmt.Sprintf("non-trainable variable %q: not a model variable of the snapshot, or repeated", p))
				}
				fixed[p] = true
			}
		}
	}
	if r.Len() != 0 {
		return fail("trailing bytes")
	}
	var stale []string // copies the snapshot predates
	for _, v := range t.snapshotVars() {
		if !seen[v.Path()] && (copyPath(v.Path()) || averagePath(v.Path())) {
			stale = append(stale, v.Path())
			continue
		}
		if !seen[v.Path()] {
			return fmt.Errorf("salsagomlx: snapshot has no variable %s: it is not from this model and direction", v.Path())
		}
	}
	// Apply.
	for _, p := range stale {
		if err := t.store.DeleteVariable(p); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if v := t.store.GetVariable(e.path); v != nil {
			if err := v.SetValue(e.val); err != nil {
				return err
			}
			continue
		}
		v, err := t.store.CreateVariable(e.path, e.val)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(e.path, "/model/") || fixed[e.path] {
			v.SetTrainable(false)
		}
	}
	if err := t.lrVar.SetValue(tensors.FromScalar(float32(lr))); err != nil {
		return err
	}
	t.lr = lr
	if t.cfg.Direction == Host {
		h := &t.host
		h.dir, h.avg, h.sf = hostDir, hostAvg, nil
		h.sf, _ = hostDir.(*direction.ScheduleFree[float32])
		h.inEval, h.cached = false, nil
		h.gen++
	}
	return nil
}
