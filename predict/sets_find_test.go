package predict

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FindSets finds the generated packages' set files at the first level
// that has any, a tensor-parallel package's per-rank files among them.
func TestFindSets(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"bench packages", []string{"bench/a/set.json", "bench/b/set.json", "x/set.json"}, []string{"bench/a/set.json", "bench/b/set.json"}},
		{"a tensor-parallel package beside another", []string{"bench/tp/set.rank1.json", "bench/tp/set.rank0.json", "bench/a/set.json"},
			[]string{"bench/a/set.json", "bench/tp/set.rank0.json", "bench/tp/set.rank1.json"}},
		{"the package itself", []string{"set.rank0.json", "set.rank1.json", "spec.json"}, []string{"set.rank0.json", "set.rank1.json"}},
		{"packages in root", []string{"a/set.json", "set.json"}, []string{"a/set.json"}},
		{"not a rank file", []string{"set.rankx.json"}, nil},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(root, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := FindSets(root)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i], _ = filepath.Rel(root, got[i])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("FindSets = %q, want %q", got, tc.want)
			}
		})
	}
}
