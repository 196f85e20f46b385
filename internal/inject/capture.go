package inject

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// HexBytes is a byte slice that JSON holds as a hex string.
type HexBytes []byte

// MarshalJSON writes b as a hex string.
func (b HexBytes) MarshalJSON() ([]byte, error) { return json.Marshal(hex.EncodeToString(b)) }

// UnmarshalJSON reads a hex string.
func (b *HexBytes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Launch is one unique launch as recorded: what it takes to launch the
// same kernel in the same way.
type Launch struct {
	// Key identifies the launch: a hash of its function, shape,
	// attributes and parameters (pointers replaced by their aliasing).
	Key string `json:"key"`
	// Seq is the launch's place in the recorder's event order (modules
	// loaded before it have a smaller Seq).
	Seq uint64 `json:"seq,omitempty"`
	// API is the driver call that launched it (cuLaunchKernel,
	// cuLaunchKernelEx, ...).
	API string `json:"api"`
	// Name is the function's mangled name; Module the hash of the module
	// image that defines it (see ResolveModules).
	Name   string `json:"name"`
	Module string `json:"module,omitempty"`
	// Alternatives are other modules that define a function of the same
	// name, which the replay tries when Module's is not the launched one.
	Alternatives []string `json:"alternatives,omitempty"`
	// Loaded is the hash of the image the launched function came from,
	// where the recorder saw it loaded (its handle, cuFuncGetModule, mapped
	// to the image loaded by the call that returned the handle): then
	// Module is Loaded and there are no alternatives, unless the image's
	// registers for the function differ from the launch's.
	Loaded string    `json:"module_hash,omitempty"`
	Grid   [3]uint32 `json:"grid"`
	Block  [3]uint32 `json:"block"`
	// Smem is the dynamic shared memory of the launch.
	Smem uint32 `json:"smem"`
	// The function's attributes at the launch: registers per thread,
	// static shared memory, local memory per thread, the dynamic shared
	// memory limit the application set and whether non-portable cluster
	// sizes were allowed.
	Regs               int `json:"regs"`
	StaticSmem         int `json:"static_smem"`
	Local              int `json:"local"`
	MaxDynSmem         int `json:"max_dyn_smem"`
	NonPortableCluster int `json:"non_portable_cluster,omitempty"`
	// Params are the parameters' (offset, size) in Blob, the parameter
	// buffer as launched.
	Params [][2]int  `json:"params"`
	Blob   HexBytes  `json:"blob"`
	Attrs  []Attr    `json:"attrs,omitempty"`
	Ptrs   []Pointer `json:"ptrs,omitempty"`
	// Inner are the pointers found in the bytes kept of Ptrs' buffers;
	// InnerDropped counts those found past the recorder's limit, which
	// were not recorded.
	Inner        []Inner `json:"inner,omitempty"`
	InnerDropped int     `json:"inner_dropped,omitempty"`
}

// Check reports a launch record that cannot be replayed as it stands: no
// key or name, a parameter or pointer outside the parameter buffer, an
// inner pointer in no pointer's buffer or outside its allocation.
func (l *Launch) Check() error {
	if l.Key == "" || l.Name == "" {
		return fmt.Errorf("launch record without key or name")
	}
	for _, p := range l.Params {
		if p[0] < 0 || p[1] < 0 || p[0]+p[1] > len(l.Blob) {
			return fmt.Errorf("launch %s: parameter (%d, %d) outside its %d-byte buffer", l.Key, p[0], p[1], len(l.Blob))
		}
	}
	for _, p := range l.Ptrs {
		if p.Off < 0 || p.Off+8 > len(l.Blob) || p.Group < 0 || p.Group >= len(l.Ptrs) {
			return fmt.Errorf("launch %s: pointer at %d outside its %d-byte buffer", l.Key, p.Off, len(l.Blob))
		}
	}
	for i, q := range l.Inner {
		if q.In < 0 || q.In >= len(l.Ptrs) || q.At < 0 {
			return fmt.Errorf("launch %s: inner pointer %d in pointer %d at %d: no such pointer", l.Key, i, q.In, q.At)
		}
		if q.Range <= 0 || q.Value < q.Base || q.Value-q.Base >= uint64(q.Range) {
			return fmt.Errorf("launch %s: inner pointer %d (%#x) outside its allocation [%#x, +%d)", l.Key, i, q.Value, q.Base, q.Range)
		}
	}
	return nil
}

// InnerOverflow is nil unless the recorder found more device pointers
// stored in the launch's buffers than it keeps: then it says how many it
// dropped. Such a launch is not to be replayed, since it would read the
// capturing process's addresses.
func (l *Launch) InnerOverflow() error {
	if l.InnerDropped <= 0 {
		return nil
	}
	return fmt.Errorf("its buffers held %d device pointers more than the %d the recorder kept", l.InnerDropped, len(l.Inner))
}

// Attr is a launch attribute (CUlaunchAttribute: id and 64-byte value).
type Attr struct {
	ID    int      `json:"id"`
	Value HexBytes `json:"value"`
}

// Pointer is a device pointer found in a launch's parameter buffer.
type Pointer struct {
	// Off is its byte offset in the parameter buffer.
	Off int `json:"off"`
	// Value is the pointer; Base and Range the allocation it points into
	// (cuPointerGetAttribute's range).
	Value uint64 `json:"value"`
	Base  uint64 `json:"base"`
	Range int64  `json:"range"`
	// Group is the index of the first pointer into the same allocation.
	Group int `json:"group"`
	// Snapshot is what was kept of the bytes at Value.
	Snapshot
}

// Snapshot names the bytes a pointer pointed to when the kernel started.
type Snapshot struct {
	// Snap is the hash of the bytes kept (SnapLen of them), "" when none
	// were.
	Snap    string `json:"snap,omitempty"`
	SnapLen int    `json:"snap_len,omitempty"`
	// Whole is set by Pack when the snapshot is every byte recorded, not
	// a sample of them.
	Whole bool `json:"whole,omitempty"`
}

// Inner is a device pointer that the capture found stored in a buffer the
// launch points to, not among its parameters: an array of pointers (a
// grouped GEMM's A, B and D of each group), a struct in device memory. The
// replay re-points it into a buffer of its own allocation's size, as it
// does a parameter's.
type Inner struct {
	// In is the index in Launch.Ptrs of the pointer whose buffer holds
	// it, and At its byte offset from that pointer.
	In int   `json:"in"`
	At int64 `json:"at"`
	// Value is the pointer; Base and Range the allocation it points into.
	Value uint64 `json:"value"`
	Base  uint64 `json:"base"`
	Range int64  `json:"range"`
	// Snapshot is what was kept of the bytes at Value.
	Snapshot
}

// Call is one launch made while recording was armed.
type Call struct {
	Seq    uint64 `json:"seq"`
	Key    string `json:"key"`
	Stream uint64 `json:"stream"`
	// Ptrs are the values of the launch's pointers, in the order of its
	// Launch.Ptrs: where this call's buffers lay (a launch's key records
	// only how its pointers alias each other).
	Ptrs []uint64 `json:"ptrs,omitempty"`
	// Error says why the launch could not be recorded ("" when it was).
	Error string `json:"error,omitempty"`
}

// ModuleLoad is one module image loaded by the process.
type ModuleLoad struct {
	Seq  uint64 `json:"seq"`
	ID   uint32 `json:"id"`
	Hash string `json:"hash"`
	Size int64  `json:"size"`
}

// Capture is what the recorder wrote into a directory.
type Capture struct {
	Dir      string
	Modules  []ModuleLoad
	Launches map[string]*Launch
	// Calls are the armed launches in the order they were made.
	Calls []Call
	// Errors are the recorder's own errors.
	Errors []string
	// SnapBytes is the most bytes kept of one buffer, but of one whose
	// first bytes are mostly runs (a mask), which is kept up to runsCap.
	SnapBytes int
	armed     bool
}

type event struct {
	T string `json:"t"`
	Launch
	ID        uint32   `json:"id"`
	Hash      string   `json:"hash"`
	Size      int64    `json:"size"`
	Stream    uint64   `json:"stream"`
	Error     string   `json:"error"`
	On        int      `json:"on"`
	P         []uint64 `json:"p"`
	SnapBytes int      `json:"snap_bytes"`
}

// ReadDir reads the recorder's output in dir: the events file of the one
// process that armed the recorder (events-PID.jsonl; other processes that
// loaded the recorder, such as PyTorch's compile workers, wrote their own
// and are left out). Modules and snapshots stay on disk. A line that does
// not parse is an error naming the file and line.
func ReadDir(dir string) (*Capture, error) {
	files, err := filepath.Glob(filepath.Join(dir, "events-*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no events file: the recorder was not loaded (CUDA_INJECTION64_PATH) or could not write", dir)
	}
	var armed []*Capture
	for _, f := range files {
		c, err := readEvents(dir, f)
		if err != nil {
			return nil, err
		}
		if c.armed {
			armed = append(armed, c)
		}
	}
	switch len(armed) {
	case 0:
		return nil, fmt.Errorf("%s: no process armed the recorder (%d events files)", dir, len(files))
	case 1:
		return armed[0], nil
	}
	return nil, fmt.Errorf("%s: %d processes armed the recorder; record one", dir, len(armed))
}

func readEvents(dir, path string) (*Capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &Capture{Dir: dir, Launches: map[string]*Launch{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; sc.Scan(); line++ {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if err := c.add(&ev); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func (c *Capture) add(ev *event) error {
	switch ev.T {
	case "I":
		c.SnapBytes = ev.SnapBytes
	case "M":
		c.Modules = append(c.Modules, ModuleLoad{Seq: ev.Seq, ID: ev.ID, Hash: ev.Hash, Size: ev.Size})
	case "K":
		l := ev.Launch
		if err := l.Check(); err != nil {
			return err
		}
		c.Launches[l.Key] = &l
	case "L":
		l := c.Launches[ev.Key]
		if ev.Key != "" && l == nil {
			return fmt.Errorf("launch of unknown key %s", ev.Key)
		}
		if l != nil && ev.P != nil && len(ev.P) != len(l.Ptrs) {
			return fmt.Errorf("launch of %s with %d pointers, its record has %d", ev.Key, len(ev.P), len(l.Ptrs))
		}
		c.Calls = append(c.Calls, Call{Seq: ev.Seq, Key: ev.Key, Stream: ev.Stream, Ptrs: ev.P, Error: ev.Error})
	case "E":
		c.Errors = append(c.Errors, ev.Error)
	case "A":
		c.armed = c.armed || ev.On == 1
	case "D":
	default:
		return fmt.Errorf("unknown event %q", ev.T)
	}
	return nil
}
