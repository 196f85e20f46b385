package inject

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
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

// ResolveModules finds the module image of each launch's function: among
// the modules loaded before the launch whose image defines the function,
// the one loaded last (the name a launch resolves is the one most recently
// loaded, as lazy loading loads a module right before its first launch).
// It returns a note per launch whose function no module defines, or whose
// choice was among differing images.
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
		l.Module = ""
		distinct := map[string]bool{}
		for _, m := range c.Modules {
			if m.Seq < l.Seq && holds(m.Hash, l.Name) {
				l.Module = m.Hash
				distinct[m.Hash] = true
			}
		}
		switch {
		case l.Module == "":
			notes = append(notes, fmt.Sprintf("%s: no loaded module defines %s", l.Key, l.Name))
		case len(distinct) > 1:
			notes = append(notes, fmt.Sprintf("%s: %d differing modules define %s; the last loaded (%s) is taken", l.Key, len(distinct), l.Name, l.Module))
		}
	}
	return notes, nil
}
