// Package atomicfile writes a file so that readers see the old contents
// or the new ones, never half of them, with the mode a plain create gives
// (0666 less the umask) and errors that name the file asked for.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes path through write: into a temporary file beside it,
// created 0666 less the umask, then renamed over path. On an error the
// temporary file is removed, path is left as it was, and the error names
// path (not the temporary file).
func Write(path string, write func(io.Writer) error) error {
	tmp, err := create(path)
	if err != nil {
		return named(path, err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	if err := write(tmp); err != nil {
		tmp.Close()
		return named(path, err)
	}
	if err := tmp.Close(); err != nil {
		return named(path, err)
	}
	if err := os.Rename(name, path); err != nil {
		return named(path, err)
	}
	return nil
}

// WriteBytes writes data to path as Write does.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func create(path string) (*os.File, error) {
	for range 10 {
		var b [6]byte
		rand.Read(b[:])
		name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+hex.EncodeToString(b[:])+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("no free temporary name beside it")
}

// named returns err about path: a *fs.PathError about the temporary file
// is reworded to name path.
func named(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: "rename", Path: path, Err: le.Err}
	}
	return fmt.Errorf("%s: %w", path, err)
}
