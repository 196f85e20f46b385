package nccl

/*
#include <stdlib.h>
#include "nccl_shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/kreplay/kreplay/internal/onstack"
)

// Comm is an ncclComm_t: one rank of a communicator. A Comm must not be
// used by several goroutines at once (NCCL calls are not thread-safe per
// communicator).
type Comm struct {
	h C.kr_ncclComm_t
}

func (c *Comm) ok(fn string) error {
	if c == nil || c.h == nil {
		return fmt.Errorf("%s: %w", fn, ErrNilComm)
	}
	return nil
}

func (c *Comm) handle() C.kr_ncclComm_t {
	if c == nil {
		return nil
	}
	return c.h
}

// Ptr returns the raw ncclComm_t, for code that passes it on to C.
func (c *Comm) Ptr() unsafe.Pointer {
	if c == nil {
		return nil
	}
	return unsafe.Pointer(c.h)
}

// GetUniqueID creates the token the ranks of a new communicator share
// (ncclGetUniqueId). Call it on one rank and give the result to every
// rank's CommInitRank.
func GetUniqueID() (UniqueID, error) {
	var id UniqueID
	if err := Load(); err != nil {
		return id, err
	}
	var cid C.kr_ncclUniqueId
	if err := check("ncclGetUniqueId", C.kr_ncclGetUniqueId(&cid), nil); err != nil {
		return id, err
	}
	copy(id[:], unsafe.Slice((*byte)(unsafe.Pointer(&cid.internal[0])), UniqueIDBytes))
	return id, nil
}

// CommInitRank creates rank rank of an nranks-rank communicator
// (ncclCommInitRank), on the CUDA device current on the calling thread.
// It blocks until every rank has called it, so the ranks must call it
// from different threads or processes (or inside GroupStart/GroupEnd).
func CommInitRank(nranks int, id UniqueID, rank int) (*Comm, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	if nranks < 1 || rank < 0 || rank >= nranks || nranks > math.MaxInt32 {
		return nil, fmt.Errorf("ncclCommInitRank: rank %d of %d ranks", rank, nranks)
	}
	var cid C.kr_ncclUniqueId
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&cid.internal[0])), UniqueIDBytes), id[:])
	var h C.kr_ncclComm_t
	if err := check("ncclCommInitRank", C.kr_ncclCommInitRank(&h, C.int(nranks), &cid, C.int(rank)), nil); err != nil {
		return nil, err
	}
	onstack.Fix() // handlers installed as NCCL starts its threads
	return &Comm{h: h}, nil
}

// CommInitAll creates one communicator of len(devices) ranks within this
// process (ncclCommInitAll): rank i runs on CUDA device devices[i]. It
// needs no other thread; the communicators it returns are used either from
// one thread inside GroupStart/GroupEnd or from one thread per rank.
// NCCL makes each device current on the calling thread in turn and then
// makes current the device that was (device 0 when none was), whose
// primary context is then current on the thread.
func CommInitAll(devices []int) ([]*Comm, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	n := len(devices)
	if n == 0 {
		return nil, fmt.Errorf("ncclCommInitAll: no devices")
	}
	devs := make([]C.int, n)
	for i, d := range devices {
		if d < 0 || d > math.MaxInt32 {
			return nil, fmt.Errorf("ncclCommInitAll: bad device %d", d)
		}
		devs[i] = C.int(d)
	}
	hs := make([]C.kr_ncclComm_t, n)
	if err := check("ncclCommInitAll", C.kr_ncclCommInitAll(&hs[0], C.int(n), &devs[0]), nil); err != nil {
		return nil, err
	}
	onstack.Fix() // handlers installed as NCCL starts its threads
	comms := make([]*Comm, n)
	for i, h := range hs {
		comms[i] = &Comm{h: h}
	}
	return comms, nil
}

// Destroy frees the communicator's resources once its queued work is done
// (ncclCommDestroy). Destroying a nil or already destroyed communicator is
// a no-op. Destroy the ranks of one process concurrently, one thread per
// rank, or from one thread: NCCL may synchronize the ranks of a process.
func (c *Comm) Destroy() error {
	if c == nil || c.h == nil {
		return nil
	}
	err := check("ncclCommDestroy", C.kr_ncclCommDestroy(c.h), nil)
	c.h = nil
	return err
}

// Abort frees the communicator and aborts the operations still running on
// the device (ncclCommAbort), e.g. a collective waiting for a rank that
// will never arrive. Aborting a nil or destroyed communicator is a no-op.
func (c *Comm) Abort() error {
	if c == nil || c.h == nil {
		return nil
	}
	err := check("ncclCommAbort", C.kr_ncclCommAbort(c.h), nil)
	c.h = nil
	return err
}

func (c *Comm) intQuery(fn string, call func(C.kr_ncclComm_t, *C.int) C.kr_ncclResult_t) (int, error) {
	if err := c.ok(fn); err != nil {
		return 0, err
	}
	var v C.int
	if err := check(fn, call(c.h, &v), c.h); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Count returns the number of ranks of the communicator (ncclCommCount).
func (c *Comm) Count() (int, error) {
	return c.intQuery("ncclCommCount", func(h C.kr_ncclComm_t, v *C.int) C.kr_ncclResult_t { return C.kr_ncclCommCount(h, v) })
}

// CuDevice returns the CUDA device of this rank (ncclCommCuDevice).
func (c *Comm) CuDevice() (int, error) {
	return c.intQuery("ncclCommCuDevice", func(h C.kr_ncclComm_t, v *C.int) C.kr_ncclResult_t { return C.kr_ncclCommCuDevice(h, v) })
}

// UserRank returns this rank's index in the communicator
// (ncclCommUserRank).
func (c *Comm) UserRank() (int, error) {
	return c.intQuery("ncclCommUserRank", func(h C.kr_ncclComm_t, v *C.int) C.kr_ncclResult_t { return C.kr_ncclCommUserRank(h, v) })
}

// LastError returns ncclGetLastError's message for the communicator (c may
// be nil), or "" when there is none or the library predates NCCL 2.13.
// The message may belong to an earlier call.
func (c *Comm) LastError() string {
	if Load() != nil {
		return ""
	}
	if p := C.kr_ncclGetLastError(c.handle()); p != nil {
		return C.GoString(p)
	}
	return ""
}

// GroupStart starts a group call (ncclGroupStart): NCCL calls made on this
// thread until GroupEnd do not block for other ranks. One thread that
// drives several ranks must bracket their collectives with it.
func GroupStart() error {
	if err := Load(); err != nil {
		return err
	}
	return check("ncclGroupStart", C.kr_ncclGroupStart(), nil)
}

// GroupEnd ends a group call (ncclGroupEnd) and returns once the grouped
// operations are enqueued on their streams.
func GroupEnd() error {
	if err := Load(); err != nil {
		return err
	}
	return check("ncclGroupEnd", C.kr_ncclGroupEnd(), nil)
}

// count checks an element count for a collective.
func count(fn, what string, n int) error {
	if n < 0 {
		return fmt.Errorf("%s: negative %s %d", fn, what, n)
	}
	return nil
}

// AllReduce enqueues an all-reduce of count elements from send into recv
// on stream (ncclAllReduce); send == recv reduces in place.
func (c *Comm) AllReduce(send, recv uintptr, n int, dt DataType, op RedOp, stream unsafe.Pointer) error {
	const fn = "ncclAllReduce"
	if err := c.ok(fn); err != nil {
		return err
	}
	if err := count(fn, "count", n); err != nil {
		return err
	}
	return check(fn, C.kr_ncclAllReduce(C.uintptr_t(send), C.uintptr_t(recv), C.size_t(n), C.int(dt), C.int(op), c.h, stream), c.h)
}

// AllGather enqueues an all-gather (ncclAllGather): every rank contributes
// sendCount elements and receives nranks*sendCount in recv, rank i's at
// offset i*sendCount.
func (c *Comm) AllGather(send, recv uintptr, sendCount int, dt DataType, stream unsafe.Pointer) error {
	const fn = "ncclAllGather"
	if err := c.ok(fn); err != nil {
		return err
	}
	if err := count(fn, "sendcount", sendCount); err != nil {
		return err
	}
	return check(fn, C.kr_ncclAllGather(C.uintptr_t(send), C.uintptr_t(recv), C.size_t(sendCount), C.int(dt), c.h, stream), c.h)
}

// ReduceScatter enqueues a reduce-scatter (ncclReduceScatter): send holds
// nranks*recvCount elements, and rank i receives block i of the reduction.
func (c *Comm) ReduceScatter(send, recv uintptr, recvCount int, dt DataType, op RedOp, stream unsafe.Pointer) error {
	const fn = "ncclReduceScatter"
	if err := c.ok(fn); err != nil {
		return err
	}
	if err := count(fn, "recvcount", recvCount); err != nil {
		return err
	}
	return check(fn, C.kr_ncclReduceScatter(C.uintptr_t(send), C.uintptr_t(recv), C.size_t(recvCount), C.int(dt), C.int(op), c.h, stream), c.h)
}

// Broadcast enqueues a broadcast of count elements from rank root's send
// into every rank's recv (ncclBroadcast); send == recv is in place.
func (c *Comm) Broadcast(send, recv uintptr, n int, dt DataType, root int, stream unsafe.Pointer) error {
	const fn = "ncclBroadcast"
	if err := c.ok(fn); err != nil {
		return err
	}
	if err := count(fn, "count", n); err != nil {
		return err
	}
	if root < 0 || root > math.MaxInt32 {
		return fmt.Errorf("%s: bad root %d", fn, root)
	}
	return check(fn, C.kr_ncclBroadcast(C.uintptr_t(send), C.uintptr_t(recv), C.size_t(n), C.int(dt), C.int(root), c.h, stream), c.h)
}
