package captured

import (
	"errors"
	"io/fs"

	"github.com/kreplay/kreplay/internal/inject"
)

// Prefetch reads into c, from fsys, the files New reads for l primed by
// producers (Options.Producers), and decodes them as New does: the module
// images of l and of each producer New builds (those no context has
// loaded yet), and the snapshots it fills their buffers with, with the
// scrambled periods it tiles sampled ones with. New, given c
// (Options.Snapshots), then opens none of those files again (it takes a
// module image out of c as it loads it). Prefetch makes no CUDA call and
// is safe to run while New runs on another goroutine: a replay reads the
// next signature's files while the device measures one.
//
// It reads no more than New would: it leaves out the producers New leaves
// out before building them, and the snapshots of a launch none of whose
// module images can be read, as New fails before reading them. (What
// New finds only on the device, a module built for another GPU, it
// cannot know.)
//
// The entries it adds take at most half of c's bound: it stops at the
// first that would go beyond, and returns nil. The entries a replay's
// last New used are then the most recently used, and a prefetch evicts
// none of them as long as they take at most the other half, as one
// signature's files do. It returns the first error it met, which New
// would report, or drop the producer it came from with; a nil c reads
// nothing.
func (c *Snapshots) Prefetch(l *inject.Launch, producers []*inject.Producer, fsys fs.FS) error {
	if c == nil {
		return nil
	}
	p := &prefetch{c: c, fsys: fsys, left: c.max / 2}
	if err := p.launch(l); err != nil {
		return p.ended(err)
	}
	var first error
	for _, pr := range producers {
		if checkPrimer(l, pr) != nil {
			continue
		}
		if err := p.launch(pr.Launch); err != nil && first == nil {
			first = err
		}
		if p.full {
			break
		}
	}
	return p.ended(first)
}

// prefetch is one Prefetch's share of a Snapshots: it adds up to left
// bytes of entries, and is full once one would go beyond.
type prefetch struct {
	c    *Snapshots
	fsys fs.FS
	left int64
	full bool
}

// errFull stops a prefetch whose share is spent.
var errFull = errors.New("prefetch: its share of the snapshots kept is spent")

// launch reads what New reads for l alone: its module images, then the
// snapshots fill tiles its buffers with.
func (p *prefetch) launch(l *inject.Launch) error {
	if err := checkLaunch(l); err != nil {
		return err
	}
	var first error
	read := 0
	for _, hash := range moduleHashes(l) {
		if p.full {
			return errFull
		}
		if loaded(hash) {
			read++
			continue
		}
		if _, err := imageOf(p, p.fsys, hash); err != nil {
			first = err
			continue
		}
		read++
	}
	if read == 0 {
		return first
	}
	for _, sn := range snapshots(l) {
		if p.full {
			return errFull
		}
		if _, err := patternOf(p, p.fsys, sn); err != nil {
			return err
		}
	}
	return nil
}

// ended is err, but nil when the prefetch only stopped for want of room.
func (p *prefetch) ended(err error) error {
	if errors.Is(err, errFull) {
		return nil
	}
	return err
}

func (p *prefetch) get(k snapKey) ([]byte, bool) { return p.c.get(k) }

// put keeps data in p's Snapshots while p's share has room for it.
func (p *prefetch) put(k snapKey, data []byte) bool {
	if p.full || int64(len(data)) > p.left {
		p.full = true
		return false
	}
	added := p.c.put(k, data)
	if added {
		p.left -= int64(len(data))
	}
	return added
}

// imageOf is what Prefetch makes of module hash: its image, read from
// fsys and kept in c.
func imageOf(c keeper, fsys fs.FS, hash string) ([]byte, error) {
	k := snapKey{hash: hash, kind: moduleImage}
	if data, ok := c.get(k); ok {
		return data, nil
	}
	data, err := inject.ReadModule(fsys, hash)
	if err != nil {
		return nil, err
	}
	c.put(k, data)
	return data, nil
}
