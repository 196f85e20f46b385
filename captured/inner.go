package captured

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
)

// view is a pointer into a group's allocation whose snapshot fill writes
// there: a parameter pointer or an inner one.
type view struct {
	value uint64
	inject.Snapshot
	what string // for errors: "pointer at 24", "inner pointer 3"
}

// patch is an inner pointer's place in its holder's buffer and the group
// it points into.
type patch struct {
	off    int64 // in the holder's buffer
	target *group
	value  uint64 // as recorded
}

// groupInner puts each inner pointer, but those found at a suspect word,
// into the group of its allocation (a parameter's group when one shares
// its base, else a group of its own) and notes, in the group of the
// parameter pointer whose buffer holds it, where it lies there.
func (k *Kernel) groupInner() {
	for j, q := range k.l.Inner {
		if k.suspect[q.In] {
			continue // found in bytes that are no buffer's
		}
		var g *group
		for _, h := range k.groups {
			if h.base == q.Base {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{base: q.Base, size: q.Range}
			k.groups = append(k.groups, g)
		}
		g.inner = append(g.inner, j)
		holder := k.groupOf(q.In)
		if off := int64(k.l.Ptrs[q.In].Value-holder.base) + q.At; off >= 0 && off+8 <= holder.size {
			holder.patches = append(holder.patches, patch{off: off, target: g, value: q.Value})
		}
	}
}

// groupOf returns the group holding parameter pointer i.
func (k *Kernel) groupOf(i int) *group {
	for _, g := range k.groups {
		if slices.Contains(g.ptrs, i) {
			return g
		}
	}
	return nil
}

// address is where p's pointer points in buffer set set.
func (p patch) address(set int) uint64 {
	return uint64(p.target.bufs[set]) + (p.value - p.target.base)
}

// repoint writes the inner pointers of every group's buffer of set: the
// addresses of their allocations' replay buffers.
func (k *Kernel) repoint(set int, s *cuda.Stream) error {
	var word [8]byte
	for _, g := range k.groups {
		for _, p := range g.patches {
			binary.LittleEndian.PutUint64(word[:], p.address(set))
			if err := cuda.CopyHtoD(g.bufs[set].Add(int(p.off)), word[:], s); err != nil {
				return err
			}
		}
	}
	return nil
}

// views are the pointers into g whose snapshots fill writes, by address.
func (k *Kernel) views(g *group) []view {
	var vs []view
	for _, i := range g.ptrs {
		p := k.l.Ptrs[i]
		vs = append(vs, view{value: p.Value, Snapshot: p.Snapshot, what: "pointer at " + strconv.Itoa(p.Off)})
	}
	for _, j := range g.inner {
		q := k.l.Inner[j]
		vs = append(vs, view{value: q.Value, Snapshot: q.Snapshot, what: "inner pointer " + strconv.Itoa(j)})
	}
	slices.SortStableFunc(vs, func(a, b view) int { return cmp.Compare(a.value, b.value) })
	return vs
}
