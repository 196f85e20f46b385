package inject

import (
	"bytes"
	"debug/elf"
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
// thread (the top byte of its .text section's sh_info, as cuobjdump reads
// it) and static shared memory (the size of its .nv.shared section). Ok is
// false when the image has no .text section for the function.
type Resources struct {
	Regs, StaticSmem int
	Ok               bool
}

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
			r.Regs, r.Ok = int(s.Info>>24), true
		case ".nv.shared." + name:
			r.StaticSmem = int(s.Size)
		}
	}
	return r
}

// ResolveModules finds the module image of each launch's function among
// the modules loaded before the launch whose image defines it. Where
// several differing images define it (Triton compiles one image per
// autotuning configuration, all with the kernel's name), those whose
// registers and static shared memory match the launch's come first, then
// the one loaded last (lazy loading loads a module right before its first
// launch): Module is the first, Alternatives the others, which the replay
// tries in turn when the first is not the launched binary. It returns a
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
		var cands []string // last loaded first
		d := definedBy(l.Name)
		for j := len(d) - 1; j >= 0; j-- {
			m := c.Modules[d[j]]
			if m.Seq < l.Seq && !slices.Contains(cands, m.Hash) {
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
			return r.Ok && (l.Regs == 0 || r.Regs == l.Regs) && r.StaticSmem == l.StaticSmem
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
				how = "its registers and static shared memory match the launch's"
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
