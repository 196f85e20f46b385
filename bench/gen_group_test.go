package bench

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

func TestCheckRanks(t *testing.T) {
	ok := rankSets("w", 2)
	swapped := []*signatures.Set{ok[1], ok[0]}
	other := rankSets("w", 2)
	other[1].Source.Workload = "v"
	world := rankSets("w", 2)
	world[1].Source.WorldSize = 4
	for _, tc := range []struct {
		name string
		sets []*signatures.Set
		want string
	}{
		{"ranks in order", ok, ""},
		{"one", rankSets("w", 1), "2 ranks or more"},
		{"out of order", swapped, "is rank 1 of 2, want rank 0 of 2"},
		{"two workloads", other, `rank 1's workload is "v"`},
		{"other world", world, "is rank 1 of 4"},
		{"nil set", []*signatures.Set{ok[0], nil}, "rank 1 has no signature set"},
	} {
		err := CheckRanks(tc.sets)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
