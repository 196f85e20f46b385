package captured

import (
	"fmt"
	"io/fs"
	"sync"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
)

var (
	modMu   sync.Mutex
	modules = map[cuda.ContextKey]map[string]*cuda.Module{} // loaded once per context
)

// functions loads l's module (once per context) and returns its function,
// checked against what was recorded: the same parameters and, where
// recorded, the same registers per thread and static shared memory. When the module is not the
// launched binary, the alternatives (other modules that define a function
// of the name) are tried in turn.
//
// It returns every function that passes, in that order: the replay
// launches the first the driver accepts (Kernel.launchable). The images
// are read from fsys, or taken from c where Prefetch left them.
func functions(fsys fs.FS, l *inject.Launch, c *Snapshots, t *Timing) ([]*cuda.Function, error) {
	defer t.enter(t.enter(workModules))
	var first error
	var fns []*cuda.Function
	for _, hash := range moduleHashes(l) {
		fn, err := checkedFunction(fsys, l, hash, c, t)
		if err == nil {
			fns = append(fns, fn)
		} else if first == nil {
			first = err
		}
	}
	switch {
	case len(fns) > 0:
		return fns, nil
	case len(l.Alternatives) > 0:
		return nil, fmt.Errorf("%w (nor is any of %d other modules that define it)", first, len(l.Alternatives))
	}
	return nil, first
}

// moduleHashes are the modules functions tries for l, in order: its own,
// then the alternatives.
func moduleHashes(l *inject.Launch) []string {
	return append([]string{l.Module}, l.Alternatives...)
}

// loaded reports whether module hash is loaded in some context: then
// functions reads its image no more, in that context.
func loaded(hash string) bool {
	modMu.Lock()
	defer modMu.Unlock()
	for _, mods := range modules {
		if mods[hash] != nil {
			return true
		}
	}
	return false
}

// checkedFunction loads hash's function for l and checks it against l.
// An image built for another block shape (Triton's .reqntid) passes: the
// driver refuses its launch, and Kernel.launchable moves on.
func checkedFunction(fsys fs.FS, l *inject.Launch, hash string, c *Snapshots, t *Timing) (*cuda.Function, error) {
	mod, err := module(fsys, hash, c, t)
	if err != nil {
		return nil, err
	}
	fn, err := mod.Function(l.Name)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", hash, err)
	}
	if params, err := fn.Params(); err == nil {
		if len(params) != len(l.Params) {
			return nil, fmt.Errorf("module %s's %s takes %d parameters, the launch passed %d", hash, l.Name, len(params), len(l.Params))
		}
		for i, p := range params {
			if p.Offset != l.Params[i][0] || p.Size != l.Params[i][1] {
				return nil, fmt.Errorf("module %s's %s: parameter %d at (%d, %d), the launch had (%d, %d)",
					hash, l.Name, i, p.Offset, p.Size, l.Params[i][0], l.Params[i][1])
			}
		}
	}
	// A kernel compiled for fewer threads per block (Triton's num_warps,
	// CUDA's __launch_bounds__) fails to launch with more: then it is not
	// the launched binary, though its parameters and registers may match.
	if threads := int(l.Block[0]) * int(l.Block[1]) * int(l.Block[2]); threads > 0 {
		if most, err := fn.Attribute(cuda.FuncAttrMaxThreadsPerBlock); err == nil && most < threads {
			return nil, fmt.Errorf("module %s's %s allows %d threads per block, the launch had %d: not the same binary", hash, l.Name, most, threads)
		}
	}
	if l.Regs > 0 {
		if regs, err := fn.NumRegs(); err == nil && regs != l.Regs {
			return nil, fmt.Errorf("module %s's %s uses %d registers, the launched one %d: not the same binary", hash, l.Name, regs, l.Regs)
		}
		if ss, err := fn.Attribute(cuda.FuncAttrSharedSizeBytes); err == nil && ss != l.StaticSmem {
			return nil, fmt.Errorf("module %s's %s has %d bytes of static shared memory, the launched one %d: not the same binary", hash, l.Name, ss, l.StaticSmem)
		}
	}
	return fn, nil
}

// module loads module hash into the current context, once, its image
// read from fsys or taken from c (Snapshots.image).
func module(fsys fs.FS, hash string, c *Snapshots, t *Timing) (*cuda.Module, error) {
	ctx, err := cuda.CurrentContextKey()
	if err != nil {
		return nil, err
	}
	modMu.Lock()
	defer modMu.Unlock()
	if m := modules[ctx][hash]; m != nil {
		return m, nil
	}
	prev := t.enter(workFiles)
	image, err := c.image(fsys, hash)
	t.enter(prev)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoBinary, err)
	}
	m, err := cuda.LoadData(image)
	if err != nil {
		return nil, fmt.Errorf("loading module %s (%d bytes; built for another GPU?): %w", hash, len(image), err)
	}
	if modules[ctx] == nil {
		modules[ctx] = map[string]*cuda.Module{}
	}
	modules[ctx][hash] = m
	return m, nil
}
