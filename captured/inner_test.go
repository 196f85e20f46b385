package captured

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
)

// A grouped GEMM's workspace (one allocation, two parameter pointers into
// it) holds an array of pointers: one into the workspace itself, one into
// an allocation no parameter points to. Each inner pointer joins its
// allocation's group, is patched at its place in its holder's buffer and
// re-pointed into its target's buffer; fill sees the views by address.
func TestInnerPointers(t *testing.T) {
	const ws, weights = 0x7f0000000000, 0x7f1000000000
	snap := func(h string) inject.Snapshot { return inject.Snapshot{Snap: h, SnapLen: 64} }
	l := &inject.Launch{
		Ptrs: []inject.Pointer{
			{Off: 0, Value: ws + 512, Base: ws, Range: 4096, Group: 0, Snapshot: snap("b")},
			{Off: 8, Value: ws + 256, Base: ws, Range: 4096, Group: 0, Snapshot: snap("a")},
		},
		Inner: []inject.Inner{
			{In: 0, At: 16, Value: weights + 64, Base: weights, Range: 1 << 20, Snapshot: snap("w")},
			{In: 1, At: 8, Value: ws + 1024, Base: ws, Range: 4096},
			{In: 0, At: 4088, Value: weights, Base: weights, Range: 1 << 20}, // past the workspace's end
		},
	}
	k := &Kernel{l: l}
	k.groupPointers()
	k.groupInner()
	if len(k.groups) != 2 {
		t.Fatalf("%d groups, want 2", len(k.groups))
	}
	w, g := k.groups[0], k.groups[1]
	if diff := cmp.Diff([]int{1}, w.inner); diff != "" {
		t.Errorf("workspace's inner pointers (-want +got):\n%s", diff)
	}
	if g.base != weights || g.size != 1<<20 || len(g.ptrs) != 0 || len(g.inner) != 2 {
		t.Errorf("weights group %+v", *g)
	}
	w.bufs = []cuda.DevicePtr{0x1000000}
	g.bufs = []cuda.DevicePtr{0x2000000}
	type got struct {
		Off  int64
		Addr uint64
	}
	var ps []got
	for _, p := range w.patches {
		ps = append(ps, got{p.off, p.address(0)})
	}
	want := []got{{512 + 16, 0x2000000 + 64}, {256 + 8, 0x1000000 + 1024}}
	if diff := cmp.Diff(want, ps); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
	if p := g.patches; len(p) != 0 {
		t.Errorf("the weights hold no pointers, got %+v", p)
	}
	var order []string
	for _, v := range k.views(w) {
		order = append(order, v.what)
	}
	if diff := cmp.Diff([]string{"pointer at 8", "pointer at 0", "inner pointer 1"}, order); diff != "" {
		t.Errorf("views by address (-want +got):\n%s", diff)
	}
}
