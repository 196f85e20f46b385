package inject

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Functions returns the names of the functions a cubin (an ELF image)
// defines: its FUNC symbols and its ".text.NAME" sections.
func Functions(cubin []byte) (map[string]bool, error) {
	f, err := elf.NewFile(bytes.NewReader(cubin))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names := map[string]bool{}
	for _, s := range f.Sections {
		if n, ok := strings.CutPrefix(s.Name, ".text."); ok {
			names[n] = true
		}
	}
	syms, err := f.Symbols()
	if err != nil && err != elf.ErrNoSymbols {
		return nil, err
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Name != "" {
			names[s.Name] = true
		}
	}
	return names, nil
}

// Resources are what a cubin says of one of its functions: registers per
// thread (its EIATTR_REGCOUNT attribute in the .nv.info section, as
// cuobjdump -elf shows it) and the size of its .nv.shared section (which
// can differ from the driver's static shared memory attribute: Triton's
// reductions have 1024 bytes there and 0 by the attribute). Ok is false when the image has no .text section
// for the function; Regs is 0 when no attribute names it.
type Resources struct {
	Regs, StaticSmem int
	// MaxThreads and ReqThreads are the block shape the function was
	// built for at most (EIATTR_MAX_THREADS, PTX .maxntid) and exactly
	// (EIATTR_REQNTID, .reqntid: Triton's kernels carry it), zero where
	// the image says nothing. The driver refuses a launch outside them.
	MaxThreads, ReqThreads [3]int
	Ok                     bool
}

// Admits reports whether a block of shape b may launch the function.
func (r Resources) Admits(b [3]uint32) bool {
	n := int(b[0]) * int(b[1]) * int(b[2])
	if r.ReqThreads != [3]int{} && r.ReqThreads != [3]int{int(b[0]), int(b[1]), int(b[2])} {
		return false
	}
	if m := r.MaxThreads; m != [3]int{} && n > max(m[0], 1)*max(m[1], 1)*max(m[2], 1) {
		return false
	}
	return true
}

// eiattrRegcount is the .nv.info attribute that holds a function's
// register count: format EIFMT_SVAL (4), then a 16-bit size (8), the
// function's symbol index and the count, 32 bits each.
const eiattrRegcount = 0x2f

// eiattrMaxThreads and eiattrReqntid hold a function's block bounds, in
// the same format: the symbol index, then x, y and z, 32 bits each.
const (
	eiattrMaxThreads = 0x05
	eiattrReqntid    = 0x10
)

// FunctionResources reads a function's Resources from a cubin.
func FunctionResources(cubin []byte, name string) Resources {
	f, err := elf.NewFile(bytes.NewReader(cubin))
	if err != nil {
		return Resources{}
	}
	defer f.Close()
	var r Resources
	for _, s := range f.Sections {
		switch s.Name {
		case ".text." + name:
			r.Ok = true
		case ".nv.shared." + name:
			r.StaticSmem = int(s.Size)
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		return r
	}
	sym := -1
	for i, s := range syms {
		if s.Name == name {
			sym = i + 1 // Symbols leaves out the null symbol at index 0
			break
		}
	}
	if sym < 0 {
		return r
	}
	// The register count is in .nv.info, after the function's symbol
	// index; the thread bounds in the function's own .nv.info.<name>
	// (x, y, z), or after its index in .nv.info.
	threads := func(attr byte, v []byte) {
		b := [3]int{int(binary.LittleEndian.Uint32(v)), int(binary.LittleEndian.Uint32(v[4:])), int(binary.LittleEndian.Uint32(v[8:]))}
		if attr == eiattrMaxThreads {
			r.MaxThreads = b
		} else {
			r.ReqThreads = b
		}
	}
	nvInfo(f.Section(".nv.info"), func(attr byte, body []byte) {
		if len(body) < 8 || int(binary.LittleEndian.Uint32(body)) != sym {
			return
		}
		switch {
		case attr == eiattrRegcount:
			r.Regs = int(binary.LittleEndian.Uint32(body[4:]))
		case (attr == eiattrMaxThreads || attr == eiattrReqntid) && len(body) >= 16:
			threads(attr, body[4:])
		}
	})
	nvInfo(f.Section(".nv.info."+name), func(attr byte, body []byte) {
		if (attr == eiattrMaxThreads || attr == eiattrReqntid) && len(body) == 12 {
			threads(attr, body)
		}
	})
	return r
}

// nvInfo calls fn with each EIFMT_SVAL attribute of an .nv.info section
// (format 4, the attribute, a 16-bit size, then the value); it stops at
// the first malformed entry.
func nvInfo(sec *elf.Section, fn func(attr byte, body []byte)) {
	if sec == nil {
		return
	}
	data, err := sec.Data()
	if err != nil {
		return
	}
	for i := 0; i+4 <= len(data); {
		format, attr := data[i], data[i+1]
		switch format {
		case 1: // EIFMT_NVAL
			i += 2
			continue
		case 2, 3: // EIFMT_BVAL, EIFMT_HVAL
			i += 4
			continue
		case 4: // EIFMT_SVAL
		default:
			return
		}
		size := int(binary.LittleEndian.Uint16(data[i+2:]))
		fn(attr, data[i+4:min(len(data), i+4+size)])
		i += 4 + size
	}
}

// ResolveModules finds the module image of each launch's function. A
// launch that names the image it came from (Loaded) takes it, unless that
// image's registers for the function differ from the launch's. Otherwise
// it is sought among the modules loaded before the launch whose image
// defines it. Where
// several differing images define it (Triton compiles one image per
// autotuning configuration or argument specialization, all with the
// kernel's name), those whose registers (FunctionResources) match the
// launch's and whose thread bounds admit its block come first, then the
// one loaded last before the launch (lazy loading loads a module right
// before its first launch), then any loaded after it: Module is the first,
// Alternatives the others, which the replay tries in turn when the first
// is not the launched binary. It returns a
// note per function no module defines, or whose choice was among
// differing images, with the number of launches it concerns.
func (c *Capture) ResolveModules() ([]string, error) {
	r := &resolver{c: c, defines: map[string]map[string]bool{}, images: map[string][]byte{},
		definers: map[string][]int{}, resources: map[[2]string]Resources{}, count: map[string]int{}}
	for _, m := range c.Modules {
		if _, ok := r.defines[m.Hash]; ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(c.Dir, "modules", m.Hash+".cubin"))
		if err != nil {
			return nil, err
		}
		names, err := Functions(data)
		if err != nil {
			names = map[string]bool{} // not an ELF image: see definedBy
		}
		r.defines[m.Hash], r.images[m.Hash] = names, data
	}
	exact := 0
	for _, l := range sortedLaunches(c.Launches) {
		if r.resolve(l) {
			exact++
		}
	}
	notes := []string{fmt.Sprintf("%d of %d unique launches name the very image they came from (the rest are matched by name, registers and threads)", exact, len(c.Launches))}
	for _, n := range r.order {
		notes = append(notes, fmt.Sprintf("%d launches: %s", r.count[n], n))
	}
	return notes, nil
}

// resolver holds what ResolveModules learns once per image and name.
type resolver struct {
	c         *Capture
	defines   map[string]map[string]bool // hash -> function names
	images    map[string][]byte
	definers  map[string][]int // name -> indexes into c.Modules, computed once
	resources map[[2]string]Resources
	order     []string // notes, first seen first
	count     map[string]int
}

func (r *resolver) note(n string) {
	if r.count[n] == 0 {
		r.order = append(r.order, n)
	}
	r.count[n]++
}

// definedBy lists the modules (in load order) whose symbols define name,
// or else, as a fallback for images whose symbols do not list it
// (cuBLAS's nvjet kernels), whose bytes hold the name NUL-terminated; the
// replay checks the parameters and registers. Computed once per name: a
// compiled decode has thousands of launches and hundreds of modules.
func (r *resolver) definedBy(name string) []int {
	if d, ok := r.definers[name]; ok {
		return d
	}
	var d []int
	for i, m := range r.c.Modules {
		if r.defines[m.Hash][name] {
			d = append(d, i)
		}
	}
	if d == nil {
		needle := append([]byte(name), 0)
		for i, m := range r.c.Modules {
			if bytes.Contains(r.images[m.Hash], needle) {
				d = append(d, i)
			}
		}
	}
	r.definers[name] = d
	return d
}

// res is image h's resources for function name.
func (r *resolver) res(h, name string) Resources {
	k := [2]string{h, name}
	x, ok := r.resources[k]
	if !ok {
		x = FunctionResources(r.images[h], name)
		r.resources[k] = x
	}
	return x
}

// matches tells whether image h's function has l's registers and admits
// its block.
func (r *resolver) matches(h string, l *Launch) bool {
	x := r.res(h, l.Name)
	return x.Ok && l.Regs > 0 && x.Regs == l.Regs && x.Admits(l.Block)
}

// candidates are the images that define l's function: those loaded
// before the launch, the last first, then those loaded after it (a module
// whose load event came late).
func (r *resolver) candidates(l *Launch) []string {
	var cands []string
	d := r.definedBy(l.Name)
	for j := len(d) - 1; j >= 0; j-- {
		if m := r.c.Modules[d[j]]; m.Seq < l.Seq && !slices.Contains(cands, m.Hash) {
			cands = append(cands, m.Hash)
		}
	}
	for _, j := range d {
		if m := r.c.Modules[j]; m.Seq >= l.Seq && !slices.Contains(cands, m.Hash) {
			cands = append(cands, m.Hash)
		}
	}
	return cands
}

// resolve sets l's Module and Alternatives and reports whether l took the
// very image it came from.
func (r *resolver) resolve(l *Launch) bool {
	cands := r.candidates(l)
	l.Module, l.Alternatives = "", nil
	if l.Loaded != "" && slices.Contains(cands, l.Loaded) {
		// The very image, by its handle, unless its registers say
		// otherwise: Inductor's autotuner loads one image per
		// configuration, all with the kernel's name. Then the others are
		// sought as for a launch without one.
		if x := r.res(l.Loaded, l.Name); !x.Ok || l.Regs == 0 || x.Regs == l.Regs {
			l.Module = l.Loaded
			return true
		}
		r.note(fmt.Sprintf("the image %s recorded for %s has %d registers, the launch %d", l.Loaded, l.Name, r.res(l.Loaded, l.Name).Regs, l.Regs))
	} else if l.Loaded != "" {
		r.note(fmt.Sprintf("the image %s recorded for %s does not define it", l.Loaded, l.Name))
	}
	if len(cands) == 0 {
		r.note(fmt.Sprintf("no loaded module defines %s", l.Name))
		return false
	}
	slices.SortStableFunc(cands, func(a, b string) int {
		ma, mb := r.matches(a, l), r.matches(b, l)
		switch {
		case ma && !mb:
			return -1
		case mb && !ma:
			return 1
		}
		return 0
	})
	l.Module = cands[0]
	if len(cands) > 1 {
		l.Alternatives = cands[1:]
		how := "the last loaded"
		if r.matches(cands[0], l) {
			how = "its registers match the launch's"
		}
		r.note(fmt.Sprintf("%d differing modules define %s; %s is taken (%s), the replay tries the others if it is not the launched one",
			len(cands), l.Name, cands[0], how))
	}
	return false
}
