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
	Ok               bool
}

// eiattrRegcount is the .nv.info attribute that holds a function's
// register count: format EIFMT_SVAL (4), then a 16-bit size (8), the
// function's symbol index and the count, 32 bits each.
const eiattrRegcount = 0x2f

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
	info := f.Section(".nv.info")
	if sym < 0 || info == nil {
		return r
	}
	data, err := info.Data()
	if err != nil {
		return r
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
			return r
		}
		size := int(binary.LittleEndian.Uint16(data[i+2:]))
		body := data[i+4 : min(len(data), i+4+size)]
		if attr == eiattrRegcount && len(body) >= 8 && int(binary.LittleEndian.Uint32(body)) == sym {
			r.Regs = int(binary.LittleEndian.Uint32(body[4:]))
		}
		i += 4 + size
	}
	return r
}

// ResolveModules finds the module image of each launch's function among
// the modules loaded before the launch whose image defines it. Where
// several differing images define it (Triton compiles one image per
// autotuning configuration, all with the kernel's name), those whose
// registers (FunctionResources) match the launch's come first, then the
// one loaded last before the launch (lazy loading loads a module right
// before its first launch), then any loaded after it: Module is the first,
// Alternatives the others, which the replay tries in turn when the first
// is not the launched binary. It returns a
// note per function no module defines, or whose choice was among
// differing images, with the number of launches it concerns.
func (c *Capture) ResolveModules() ([]string, error) {
	defines := map[string]map[string]bool{} // hash -> function names
	images := map[string][]byte{}
	for _, m := range c.Modules {
		if _, ok := defines[m.Hash]; ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(c.Dir, "modules", m.Hash+".cubin"))
		if err != nil {
			return nil, err
		}
		names, err := Functions(data)
		if err != nil {
			names = map[string]bool{} // not an ELF image: see holds below
		}
		defines[m.Hash], images[m.Hash] = names, data
	}
	// definers lists, per function name, the modules (in load order)
	// whose symbols define it, or else, as a fallback for images whose
	// symbols do not list it (cuBLAS's nvjet kernels), whose bytes hold
	// the name NUL-terminated; the replay checks the parameters and
	// registers. Computed once per name: a compiled decode has thousands
	// of launches and hundreds of modules.
	definers := map[string][]int{}
	definedBy := func(name string) []int {
		if d, ok := definers[name]; ok {
			return d
		}
		var d []int
		for i, m := range c.Modules {
			if defines[m.Hash][name] {
				d = append(d, i)
			}
		}
		if d == nil {
			needle := append([]byte(name), 0)
			for i, m := range c.Modules {
				if bytes.Contains(images[m.Hash], needle) {
					d = append(d, i)
				}
			}
		}
		definers[name] = d
		return d
	}
	resources := map[[2]string]Resources{}
	var order []string
	count := map[string]int{}
	note := func(n string) {
		if count[n] == 0 {
			order = append(order, n)
		}
		count[n]++
	}
	for _, l := range sortedLaunches(c.Launches) {
		// Candidates: those loaded before the launch, the last first, then
		// those loaded after it (a module whose load event came late).
		var cands []string
		d := definedBy(l.Name)
		for j := len(d) - 1; j >= 0; j-- {
			if m := c.Modules[d[j]]; m.Seq < l.Seq && !slices.Contains(cands, m.Hash) {
				cands = append(cands, m.Hash)
			}
		}
		for _, j := range d {
			if m := c.Modules[j]; m.Seq >= l.Seq && !slices.Contains(cands, m.Hash) {
				cands = append(cands, m.Hash)
			}
		}
		l.Module, l.Alternatives = "", nil
		if len(cands) == 0 {
			note(fmt.Sprintf("no loaded module defines %s", l.Name))
			continue
		}
		matches := func(h string) bool {
			r, ok := resources[[2]string{h, l.Name}]
			if !ok {
				r = FunctionResources(images[h], l.Name)
				resources[[2]string{h, l.Name}] = r
			}
			return r.Ok && l.Regs > 0 && r.Regs == l.Regs
		}
		slices.SortStableFunc(cands, func(a, b string) int {
			ma, mb := matches(a), matches(b)
			switch {
			case ma && !mb:
				return -1
			case mb && !ma:
				return 1
			}
			return 0
		})
		l.Module, l.Alternatives = cands[0], cands[1:]
		if len(cands) > 1 {
			how := "the last loaded"
			if matches(cands[0]) {
				how = "its registers match the launch's"
			}
			note(fmt.Sprintf("%d differing modules define %s; %s is taken (%s), the replay tries the others if it is not the launched one",
				len(cands), l.Name, cands[0], how))
		}
		if len(l.Alternatives) == 0 {
			l.Alternatives = nil
		}
	}
	notes := make([]string, len(order))
	for i, n := range order {
		notes[i] = fmt.Sprintf("%d launches: %s", count[n], n)
	}
	return notes, nil
}
