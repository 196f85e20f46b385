package replay

import (
	"sync"
	"sync/atomic"
)

// lookahead calls a function on the item after each one shardAhead hands
// out, on a goroutine of its own, in order and one at a time, passing
// over those handed out before it got to them. The function must return;
// a panic in it is dropped, and it is not called again. A nil lookahead
// (newLookahead's without a function) does nothing.
type lookahead struct {
	items   []int
	ahead   func(item int)
	queue   chan int     // positions in items to look ahead at
	handedN atomic.Int64 // items handed out so far
	done    atomic.Bool
	wg      sync.WaitGroup
}

// newLookahead starts the goroutine that calls ahead; nil when ahead is.
func newLookahead(items []int, ahead func(item int)) *lookahead {
	if ahead == nil {
		return nil
	}
	l := &lookahead{items: items, ahead: ahead, queue: make(chan int, len(items))}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for k := range l.queue {
			if l.done.Load() || int64(k) < l.handedN.Load() {
				continue
			}
			l.call(l.items[k])
		}
	}()
	return l
}

// call calls ahead on item; a panic in it stops the calls.
func (l *lookahead) call(item int) {
	defer func() {
		if recover() != nil {
			l.done.Store(true)
		}
	}()
	l.ahead(item)
}

// handed records that items[k] was handed out, and queues the next.
func (l *lookahead) handed(k int) {
	if l == nil {
		return
	}
	l.handedN.Store(int64(k + 1))
	if k+1 < len(l.items) {
		l.queue <- k + 1
	}
}

// stop passes over what is queued and waits for the call in flight.
func (l *lookahead) stop() {
	if l == nil {
		return
	}
	l.done.Store(true)
	close(l.queue)
	l.wg.Wait()
}
