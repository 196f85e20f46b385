package predict

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/signatures"
)

// FindSets returns the set files of the generated packages under root:
// root/bench/*/set.json, or root/*/set.json and root/set.json when root
// is the bench directory or a package itself; a tensor-parallel package's
// per-rank set files (set.rankN.json, bench.SetRankFile) at each level
// too.
func FindSets(root string) ([]string, error) {
	for _, dir := range []string{"bench/*", "*", ""} {
		var found []string
		for _, name := range []string{bench.SetFile, rankSetGlob} {
			m, err := filepath.Glob(filepath.Join(root, dir, name))
			if err != nil {
				return nil, err
			}
			found = append(found, m...)
		}
		if len(found) > 0 {
			slices.Sort(found)
			return found, nil
		}
	}
	return nil, nil
}

// rankSetGlob matches a tensor-parallel package's per-rank set files.
const rankSetGlob = "set.rank[0-9]*.json"

// ModuleRoot returns the nearest directory at or above dir that holds a
// go.mod, or dir when there is none.
func ModuleRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// ReadSetFiles reads signature set files.
func ReadSetFiles(paths []string) ([]*signatures.Set, error) {
	var sets []*signatures.Set
	from := map[string]string{} // workload -> the set file that gave it
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		s, err := signatures.ReadSet(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
		w := bench.Workload(s.Source)
		if o, dup := from[w]; dup {
			return nil, fmt.Errorf("two signature sets for workload %s: %s and %s (pass -sets to choose)", w, o, p)
		}
		from[w] = p
		sets = append(sets, s)
	}
	return sets, nil
}
