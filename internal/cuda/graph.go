package cuda

// #include "kr_cuda.h"
import "C"

import "unsafe"

// CaptureMode is a CUstreamCaptureMode: which CUDA calls made while a
// capture is in progress are refused as potentially unsafe.
type CaptureMode int

// Capture modes. With Go, where "thread" means the OS thread the capturing
// goroutine is locked to inside Context.Do, CaptureModeThreadLocal is
// usually what you want.
const (
	// CaptureModeGlobal refuses unsafe calls on every thread while any
	// global-mode capture is in progress in the process.
	CaptureModeGlobal CaptureMode = 0
	// CaptureModeThreadLocal refuses unsafe calls only on the capturing
	// thread.
	CaptureModeThreadLocal CaptureMode = 1
	// CaptureModeRelaxed refuses nothing.
	CaptureModeRelaxed CaptureMode = 2
)

// Graph is a CUDA graph, as produced by stream capture.
type Graph struct {
	h C.kr_CUgraph
}

// GraphExec is an instantiated, launchable graph.
type GraphExec struct {
	h C.kr_CUgraphExec
}

// BeginCapture starts capturing the work queued on s into a graph instead
// of running it. s must not be nil (the legacy stream cannot be captured).
func (s *Stream) BeginCapture(mode CaptureMode) error {
	if err := ready(); err != nil {
		return err
	}
	h, err := s.handle()
	if err != nil {
		return err
	}
	return check("cuStreamBeginCapture", C.kr_cuStreamBeginCapture(h, C.int(mode)))
}

// EndCapture ends the capture started by BeginCapture and returns the
// captured graph. If the capture was invalidated (by an unsupported call)
// the error says so and no graph is returned.
func (s *Stream) EndCapture() (*Graph, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	h, err := s.handle()
	if err != nil {
		return nil, err
	}
	var g C.kr_CUgraph
	if err := check("cuStreamEndCapture", C.kr_cuStreamEndCapture(h, &g)); err != nil {
		return nil, err
	}
	return &Graph{h: g}, nil
}

// Handle returns the CUgraph, for other libraries.
func (g *Graph) Handle() unsafe.Pointer {
	if g == nil {
		return nil
	}
	return unsafe.Pointer(g.h)
}

// NodeCount returns the number of nodes in the graph.
func (g *Graph) NodeCount() (int, error) {
	if err := ready(); err != nil {
		return 0, err
	}
	if g == nil || g.h == nil {
		return 0, ErrDestroyed
	}
	var n C.size_t
	if err := check("cuGraphGetNodes", C.kr_cuGraphGetNodes(g.h, nil, &n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Instantiate turns the graph into an executable graph. The graph may be
// destroyed afterwards; the GraphExec does not depend on it.
func (g *Graph) Instantiate() (*GraphExec, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	if g == nil || g.h == nil {
		return nil, ErrDestroyed
	}
	var e C.kr_CUgraphExec
	if err := check("cuGraphInstantiateWithFlags", C.kr_cuGraphInstantiateWithFlags(&e, g.h, 0)); err != nil {
		return nil, err
	}
	return &GraphExec{h: e}, nil
}

// Destroy destroys the graph; a second Destroy is a no-op.
func (g *Graph) Destroy() error {
	return destroyOnce("cuGraphDestroy", g == nil || g.h == nil,
		func() C.kr_CUresult { return C.kr_cuGraphDestroy(g.h) },
		func() { g.h = nil })
}

// Handle returns the CUgraphExec, for other libraries.
func (e *GraphExec) Handle() unsafe.Pointer {
	if e == nil {
		return nil
	}
	return unsafe.Pointer(e.h)
}

// Launch queues one execution of the whole graph on s.
func (e *GraphExec) Launch(s *Stream) error {
	if err := ready(); err != nil {
		return err
	}
	if e == nil || e.h == nil {
		return ErrDestroyed
	}
	sh, err := s.handle()
	if err != nil {
		return err
	}
	return check("cuGraphLaunch", C.kr_cuGraphLaunch(e.h, sh))
}

// Destroy destroys the executable graph; a second Destroy is a no-op.
func (e *GraphExec) Destroy() error {
	return destroyOnce("cuGraphExecDestroy", e == nil || e.h == nil,
		func() C.kr_CUresult { return C.kr_cuGraphExecDestroy(e.h) },
		func() { e.h = nil })
}
