package workload

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kreplay/kreplay/internal/inject"
)

// RecordKernels is Capture's kernel recorder (CaptureOptions.RecordKernels):
// it builds the recorder library (package inject) with the system C
// compiler, runs one inference in a second runner with the recorder
// loaded, and packs what it recorded into the bundle's kernels directory:
// the launches of that inference, their module images and the snapshots
// of their buffers.
func RecordKernels(rc RecordContext) error {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	lib, err := inject.Build(filepath.Join(cache, "kreplay", "inject"))
	if err != nil {
		return err
	}
	raw := filepath.Join(rc.Dir, ".kernels-raw")
	if err := os.Mkdir(raw, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(raw)
	fmt.Fprintf(rc.Progress, "capture: recording kernel binaries: a second runner with the recorder (%s)\n", lib)
	r, err := rc.StartRunner(inject.Env(lib, raw, 0))
	if err != nil {
		return err
	}
	if err := r.Record(); err != nil {
		r.Close()
		return fmt.Errorf("recording kernels: %w", err)
	}
	if err := r.Close(); err != nil {
		return fmt.Errorf("recording kernels: %w", err)
	}
	c, err := inject.ReadDir(raw)
	if err != nil {
		return err
	}
	x, err := inject.Pack(c, filepath.Join(rc.Dir, KernelsDir))
	if err != nil {
		return err
	}
	fmt.Fprintf(rc.Progress, "capture: %d launches recorded, %d unique, %d notes\n", len(x.Calls), len(x.Launches), len(x.Notes))
	for _, n := range x.Notes {
		fmt.Fprintf(rc.Progress, "capture: note: %s\n", n)
	}
	return nil
}
