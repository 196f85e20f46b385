package workload

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kreplay/kreplay/internal/inject"
)

// RecordKernels is kreplay's kernel recorder for Capture
// (CaptureOptions.Kernels): package inject's CUPTI injection library,
// built with the system C compiler on first use, loaded into the runner
// through CUDA_INJECTION64_PATH; what it records is packed into the
// bundle's kernels directory: the launches of one inference, their module
// images and the snapshots of their buffers.
var RecordKernels KernelRecorder = recorder{}

type recorder struct{}

func (recorder) Env(raw string) ([]string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	lib, err := inject.Build(filepath.Join(cache, "kreplay", "inject"))
	if err != nil {
		return nil, err
	}
	return inject.Env(lib, raw, 0), nil
}

func (recorder) Pack(raw, dir string, progress io.Writer) error {
	c, err := inject.ReadDir(raw)
	if err != nil {
		return err
	}
	x, err := inject.Pack(c, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "capture: %d launches recorded, %d unique, %d notes\n", len(x.Calls), len(x.Launches), len(x.Notes))
	for _, n := range x.Notes {
		fmt.Fprintf(progress, "capture: note: %s\n", n)
	}
	return nil
}
