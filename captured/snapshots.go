package captured

import (
	"container/list"
	"fmt"
	"io/fs"
	"sync"

	"github.com/kreplay/kreplay/internal/inject"
)

// Snapshots keeps what New reads and makes of a bundle's snapshots, by
// snapshot: its bytes, and the scrambled period a sampled one is tiled
// with, the least recently used dropped beyond a bound; and the module
// images Prefetch reads, until New loads them. The kernels of a
// run share most of their snapshots (a layer's weights, the context
// launches of one signature and the next), which New then reads,
// decompresses and scrambles once. A snapshot is known by its name, the
// hash of its bytes, whichever kernels directory it came from. Safe for
// concurrent use; New's callers must not change what it returns.
type Snapshots struct {
	mu      sync.Mutex
	max     int64
	bytes   int64
	entries map[snapKey]*list.Element
	lru     list.List // of *snapEntry, the most recently used first
}

// snapKey names what a Snapshots entry holds: a snapshot's bytes, its
// scrambled period, or a module image.
type snapKey struct {
	hash string
	n    int
	kind entryKind
}

// entryKind is what a Snapshots entry holds.
type entryKind int

const (
	snapBytes entryKind = iota
	snapScrambled
	moduleImage
)

// keeper is where readSnap and patternOf look for what they make, and
// keep it: a *Snapshots (nil keeps nothing), or a prefetch's bounded
// share of one.
type keeper interface {
	get(k snapKey) ([]byte, bool)
	put(k snapKey, data []byte) bool
}

type snapEntry struct {
	key  snapKey
	data []byte
}

// NewSnapshots returns an empty Snapshots that holds at most maxBytes.
func NewSnapshots(maxBytes int64) *Snapshots {
	return &Snapshots{max: maxBytes, entries: map[snapKey]*list.Element{}}
}

// Bytes is how many bytes c holds.
func (c *Snapshots) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// read returns sn's bytes from fsys, or from c when it has them; a nil c
// reads them every time.
func (c *Snapshots) read(fsys fs.FS, sn inject.Snapshot) ([]byte, error) {
	return readSnap(c, fsys, sn)
}

// pattern is what fill tiles sn with: its bytes when kept whole, else
// their scrambled period (scramble).
func (c *Snapshots) pattern(fsys fs.FS, sn inject.Snapshot) ([]byte, error) {
	return patternOf(c, fsys, sn)
}

// readSnap is Snapshots.read, looking in c and keeping there.
func readSnap(c keeper, fsys fs.FS, sn inject.Snapshot) ([]byte, error) {
	k := snapKey{hash: sn.Snap, n: sn.SnapLen}
	if data, ok := c.get(k); ok {
		return data, nil
	}
	data, err := inject.ReadSnapshot(fsys, sn.Snap)
	if err != nil {
		return nil, err
	}
	c.put(k, data)
	return data, nil
}

// patternOf is Snapshots.pattern, looking in c and keeping there.
func patternOf(c keeper, fsys fs.FS, sn inject.Snapshot) ([]byte, error) {
	data, err := readSnap(c, fsys, sn)
	switch {
	case err != nil:
		return nil, err
	case len(data) != sn.SnapLen || len(data) == 0:
		return nil, fmt.Errorf("snapshot %s has %d bytes, the launch recorded %d", sn.Snap, len(data), sn.SnapLen)
	case sn.Whole:
		return data, nil
	}
	k := snapKey{hash: sn.Snap, n: sn.SnapLen, kind: snapScrambled}
	if p, ok := c.get(k); ok {
		return p, nil
	}
	p := scramble(data, scramblePeriod)
	c.put(k, p)
	return p, nil
}

// image returns module hash's image from fsys, or from c, which then
// gives it up, when Prefetch left it there: New reads an image to load it
// once per context, so that c need not keep it after.
func (c *Snapshots) image(fsys fs.FS, hash string) ([]byte, error) {
	if data, ok := c.take(snapKey{hash: hash, kind: moduleImage}); ok {
		return data, nil
	}
	return inject.ReadModule(fsys, hash)
}

func (c *Snapshots) get(k snapKey) ([]byte, bool) {
	return c.lookup(k, func(e *list.Element) { c.lru.MoveToFront(e) })
}

// take is get, dropping the entry.
func (c *Snapshots) take(k snapKey) ([]byte, bool) {
	return c.lookup(k, c.remove)
}

// lookup returns k's bytes, calling then on its entry under c's lock,
// where c holds it.
func (c *Snapshots) lookup(k snapKey, then func(*list.Element)) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return nil, false
	}
	then(e)
	return e.Value.(*snapEntry).data, true
}

// put keeps data under k, dropping the least recently used entries
// beyond the bound, and reports whether it added an entry: data larger
// than the bound is not kept, nor data under a k c holds.
func (c *Snapshots) put(k snapKey, data []byte) bool {
	if c == nil || int64(len(data)) > c.max {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; ok {
		return false
	}
	c.entries[k] = c.lru.PushFront(&snapEntry{key: k, data: data})
	c.bytes += int64(len(data))
	for c.bytes > c.max {
		c.remove(c.lru.Back())
	}
	return true
}

// remove drops entry e. Call with c.mu held.
func (c *Snapshots) remove(e *list.Element) {
	old := c.lru.Remove(e).(*snapEntry)
	delete(c.entries, old.key)
	c.bytes -= int64(len(old.data))
}
