package tier3

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/nvrtc"
)

// CacheEnv names the directory of the on-disk kernel cache; by default it
// is kreplay/nvrtc under the user's cache directory. "off" disables it.
const CacheEnv = "KREPLAY_KERNEL_CACHE"

// Compiler compiles kernel sources with NVRTC for one GPU architecture and
// loads them in the current context, caching both the binaries (in memory
// and on disk) and the loaded functions. It is safe for concurrent use;
// loading needs the context current.
type Compiler struct {
	arch int // e.g. 90 for sm_90
	mu   sync.Mutex
	bins map[string][]byte
	fns  map[fnKey]*cuda.Function
	dir  string
	ver  string
	// Compiles counts NVRTC compilations (cache misses), for tests.
	Compiles int
}

type fnKey struct {
	ctx  cuda.ContextKey
	key  string
	name string
}

// NewCompiler returns a compiler for compute capability major.minor.
func NewCompiler(major, minor int) (*Compiler, error) {
	maj, min, err := nvrtc.Version()
	if err != nil {
		return nil, err
	}
	c := &Compiler{arch: major*10 + minor, bins: map[string][]byte{}, fns: map[fnKey]*cuda.Function{},
		ver: fmt.Sprintf("%d.%d", maj, min)}
	switch d := os.Getenv(CacheEnv); d {
	case "off":
	case "":
		if base, err := os.UserCacheDir(); err == nil {
			c.dir = filepath.Join(base, "kreplay", "nvrtc")
		}
	default:
		c.dir = d
	}
	return c, nil
}

// Arch returns the compute capability as major*10+minor.
func (c *Compiler) Arch() int { return c.arch }

// Source is a kernel source with its compile-time definitions.
type Source struct {
	Name    string            // file name, for messages
	Code    string            // CUDA C++
	Defines map[string]string // -D NAME=VALUE
}

func (s Source) options(arch int) []string {
	opts := []string{fmt.Sprintf("--gpu-architecture=sm_%d", arch), "--std=c++17", "-default-device"}
	keys := make([]string, 0, len(s.Defines))
	for k := range s.Defines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		opts = append(opts, "-D"+k+"="+s.Defines[k])
	}
	return opts
}

// Function returns the kernel name of src compiled for this GPU and loaded
// in the current context.
func (c *Compiler) Function(src Source, name string) (*gpu.Function, error) {
	opts := src.options(c.arch)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00nvrtc %s\x00", src.Code, strings.Join(opts, " "), c.ver)
	key := hex.EncodeToString(h.Sum(nil))[:32]
	ctx, err := cuda.CurrentContextKey()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.fns[fnKey{ctx, key, name}]; f != nil {
		return f, nil
	}
	bin, err := c.binary(key, src, opts)
	if err != nil {
		return nil, err
	}
	mod, err := cuda.LoadData(bin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Name, err)
	}
	f, err := mod.Function(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Name, err)
	}
	c.fns[fnKey{ctx, key, name}] = f
	return f, nil
}

// binary returns the CUBIN for key from memory, disk, or NVRTC.
func (c *Compiler) binary(key string, src Source, opts []string) ([]byte, error) {
	if b := c.bins[key]; b != nil {
		return b, nil
	}
	path := ""
	if c.dir != "" {
		path = filepath.Join(c.dir, key+".cubin")
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			c.bins[key] = b
			return b, nil
		}
	}
	res, err := nvrtc.Compile(src.Code, src.Name, opts)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", src.Name, err)
	}
	c.Compiles++
	if len(res.CUBIN) == 0 {
		return nil, errors.New("NVRTC returned no CUBIN")
	}
	c.bins[key] = res.CUBIN
	if path != "" {
		// Best effort: a read-only cache directory only costs recompiles.
		// A unique temporary name, so that processes or devices compiling
		// the same kernel at once never write one file.
		if err := os.MkdirAll(c.dir, 0o755); err == nil {
			if f, err := os.CreateTemp(c.dir, key+".*.tmp"); err == nil {
				_, werr := f.Write(res.CUBIN)
				if cerr := f.Close(); werr == nil && cerr == nil {
					os.Rename(f.Name(), path)
				}
				os.Remove(f.Name())
			}
		}
	}
	return res.CUBIN, nil
}
