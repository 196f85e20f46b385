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
// note per launch whose function no module defines, or whose choice was
// among differing images.
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
	// holds is the fallback for images whose symbols do not list the
	// function (cuBLAS's nvjet kernels): the name, NUL-terminated, in the
	// image's bytes. The replay checks the parameters and registers.
	holds := func(hash, name string) bool {
		return defines[hash][name] || bytes.Contains(images[hash], append([]byte(name), 0))
	}
	var notes []string
	for _, l := range sortedLaunches(c.Launches) {
		var cands []string // last loaded first
		for i := len(c.Modules) - 1; i >= 0; i-- {
			m := c.Modules[i]
			if m.Seq < l.Seq && holds(m.Hash, l.Name) && !slices.Contains(cands, m.Hash) {
				cands = append(cands, m.Hash)
			}
		}
		l.Module, l.Alternatives = "", nil
		if len(cands) == 0 {
			notes = append(notes, fmt.Sprintf("%s: no loaded module defines %s", l.Key, l.Name))
			continue
		}
		matches := func(h string) bool {
			r := FunctionResources(images[h], l.Name)
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
			notes = append(notes, fmt.Sprintf("%s: %d differing modules define %s; %s is taken (%s), the replay tries the others if it is not the launched one",
				l.Key, len(cands), l.Name, cands[0], how))
		}
		if len(l.Alternatives) == 0 {
			l.Alternatives = nil
		}
	}
	return notes, nil
}
