package cudnn

/*
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Plan is a Graph built for the backend API and given an execution plan:
// its descriptors (kept alive while the plan is), the engine heuristics
// chose, and the workspace it needs.
type Plan struct {
	Graph *Graph
	// Config is the index of the engine config used among those
	// heuristics mode A returned (cudnn-frontend's first that builds), of
	// Configs; Engine is its engine's global index.
	Config, Configs int
	Engine          int64
	// Workspace is the device memory Execute needs, in bytes.
	Workspace int64

	descs   []*Descriptor
	plan    *Descriptor
	scalars unsafe.Pointer // C memory of the by-value constants, 8 bytes each
	byValue map[int64]uintptr
}

// Build creates the graph's tensor and operation descriptors, finalizes
// the operation graph on h, asks heuristics mode A for engine configs and
// builds the execution plan of the first config whose workspace size can
// be read and whose plan finalizes: what cudnn-frontend's
// create_execution_plans({A}), check_support and build_plans do for
// PyTorch. Errors say which step failed.
func Build(h *Handle, g *Graph) (p *Plan, err error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	p = &Plan{Graph: g, byValue: map[int64]uintptr{}}
	defer func() {
		if err != nil {
			p.Destroy()
			p = nil
		}
	}()
	tensors, err := p.tensors()
	if err != nil {
		return nil, err
	}
	var ops []*Descriptor
	for _, o := range g.Ops {
		d, err := p.operation(o, tensors)
		if err != nil {
			return nil, fmt.Errorf("cudnn graph: operation %s (%s): %w", o.Name, o.Kind, err)
		}
		ops = append(ops, d)
	}
	og, err := p.newDesc(DescOperationGraph)
	if err != nil {
		return nil, err
	}
	if err := og.SetDescriptors(AttrGraphOps, ops...); err != nil {
		return nil, err
	}
	if err := og.SetHandle(AttrGraphHandle, h); err != nil {
		return nil, err
	}
	if err := og.Finalize(); err != nil {
		return nil, fmt.Errorf("cudnn graph: the operation graph does not finalize: %w", err)
	}
	if err := p.choose(og); err != nil {
		return nil, err
	}
	return p, nil
}

// newDesc creates a descriptor the plan keeps.
func (p *Plan) newDesc(t DescriptorType) (*Descriptor, error) {
	d, err := NewDescriptor(t)
	if err != nil {
		return nil, err
	}
	p.descs = append(p.descs, d)
	return d, nil
}

// tensors creates and finalizes the tensor descriptors, with 16-byte
// alignment (cudnn-frontend's default), and the by-value constants'
// host memory.
func (p *Plan) tensors() (map[int64]*Descriptor, error) {
	out := map[int64]*Descriptor{}
	n := 0
	for _, t := range p.Graph.Tensors {
		if t.ByValue {
			n++
		}
	}
	if n > 0 {
		p.scalars = C.calloc(C.size_t(n), 8)
	}
	slot := 0
	for _, t := range p.Graph.Tensors {
		d, err := p.newDesc(DescTensor)
		if err != nil {
			return nil, err
		}
		err = errors.Join(
			d.SetEnum(AttrTensorDataType, TypeDataType, int32(t.Type)),
			d.SetInt64s(AttrTensorDims, t.Dims...),
			d.SetInt64s(AttrTensorStrides, t.Strides...),
			d.SetInt64s(AttrTensorUID, t.UID),
			d.SetInt64s(AttrTensorAlignment, 16))
		if err == nil && t.Virtual {
			err = d.SetBool(AttrTensorIsVirtual, true)
		}
		if err == nil && t.ByValue {
			err = d.SetBool(AttrTensorIsByValue, true)
			addr := unsafe.Add(p.scalars, 8*slot)
			*(*float32)(addr) = t.Value
			p.byValue[t.UID] = uintptr(addr)
			slot++
		}
		if err == nil {
			err = d.Finalize()
		}
		if err != nil {
			return nil, fmt.Errorf("cudnn graph: tensor %s (UID %d, dims %v, strides %v): %w", t.Name, t.UID, t.Dims, t.Strides, err)
		}
		out[t.UID] = d
	}
	return out, nil
}

// operation creates and finalizes one operation's descriptors.
func (p *Plan) operation(o GraphOp, tensors map[int64]*Descriptor) (*Descriptor, error) {
	ts := func(uids []int64) []*Descriptor {
		var ds []*Descriptor
		for _, u := range uids {
			ds = append(ds, tensors[u])
		}
		return ds
	}
	in, out := ts(o.In), ts(o.Out)
	var attrs []Attribute
	var desc *Descriptor
	var opType DescriptorType
	var descAttr Attribute
	switch o.Kind {
	case OpMatmul:
		d, err := p.newDesc(DescMatmul)
		if err == nil {
			err = errors.Join(d.SetEnum(AttrMatmulCompType, TypeDataType, int32(o.Comp)), d.Finalize())
		}
		if err != nil {
			return nil, err
		}
		desc, opType, descAttr = d, DescOperationMatmul, AttrMatmulOpDesc
		attrs = []Attribute{AttrMatmulOpA, AttrMatmulOpB, AttrMatmulOpC}
	case OpPointwise:
		d, err := p.newDesc(DescPointwise)
		if err == nil {
			err = errors.Join(d.SetEnum(AttrPointwiseMode, TypePointwiseMode, int32(o.Mode)),
				d.SetEnum(AttrPointwiseMathPrec, TypeDataType, int32(o.Comp)))
		}
		if err == nil && o.Mode == PointwiseGenIndex {
			err = d.SetInt64s(AttrPointwiseAxis, o.Axis)
		}
		if err == nil {
			err = d.Finalize()
		}
		if err != nil {
			return nil, err
		}
		desc, opType, descAttr = d, DescOperationPointwise, AttrPointwiseOpDesc
		attrs = []Attribute{AttrPointwiseOpX, AttrPointwiseOpB, AttrPointwiseOpT}[:len(in)]
		attrs = append(attrs, AttrPointwiseOpY)
	case OpReduction:
		d, err := p.newDesc(DescReduction)
		if err == nil {
			err = errors.Join(d.SetEnum(AttrReductionCompType, TypeDataType, int32(o.Comp)),
				d.SetEnum(AttrReductionOperator, TypeReductionOperator, int32(o.Reduce)), d.Finalize())
		}
		if err != nil {
			return nil, err
		}
		desc, opType, descAttr = d, DescOperationReduction, AttrReductionOpDesc
		attrs = []Attribute{AttrReductionOpX, AttrReductionOpY}
	case OpSDPAFwd:
		opType = DescOperationSDPAFwd
		attrs = []Attribute{AttrSDPAFwdQ, AttrSDPAFwdK, AttrSDPAFwdV, AttrSDPAFwdScale, AttrSDPAFwdO, AttrSDPAFwdStats}[:len(in)+len(out)]
	default:
		return nil, fmt.Errorf("unknown operation kind %q", o.Kind)
	}
	op, err := p.newDesc(opType)
	if err != nil {
		return nil, err
	}
	if desc != nil {
		if err := op.SetDescriptors(descAttr, desc); err != nil {
			return nil, err
		}
	}
	all := append(in, out...)
	if len(attrs) != len(all) {
		return nil, fmt.Errorf("%d tensors for %d ports", len(all), len(attrs))
	}
	for i, a := range attrs {
		if err := op.SetDescriptors(a, all[i]); err != nil {
			return nil, err
		}
	}
	if err := op.Finalize(); err != nil {
		return nil, err
	}
	return op, nil
}

// choose runs heuristics mode A on the finalized operation graph og and
// builds the plan of the first engine config that takes it.
func (p *Plan) choose(og *Descriptor) error {
	heur, err := p.newDesc(DescEngineHeur)
	if err != nil {
		return err
	}
	if err := errors.Join(heur.SetDescriptors(AttrEngineHeurGraph, og),
		heur.SetEnum(AttrEngineHeurMode, TypeHeurMode, int32(HeurModeA)), heur.Finalize()); err != nil {
		return fmt.Errorf("cudnn graph: heuristics mode A: %w", err)
	}
	n, err := heur.Count(AttrEngineHeurResults)
	if err != nil {
		return fmt.Errorf("cudnn graph: heuristics mode A: %w", err)
	}
	cfgs, err := heur.Descriptors(AttrEngineHeurResults, DescEngineConfig, n)
	if err != nil {
		return fmt.Errorf("cudnn graph: heuristics mode A: %w", err)
	}
	p.descs = append(p.descs, cfgs...)
	p.Configs = len(cfgs)
	if len(cfgs) == 0 {
		return errors.New("cudnn graph: heuristics mode A found no engine config")
	}
	var errs []error
	for i, cfg := range cfgs {
		if _, err := cfg.Int64(AttrEngineCfgWorkspace); err != nil {
			errs = append(errs, fmt.Errorf("config %d: %w", i, err))
			continue
		}
		plan, err := p.newDesc(DescExecutionPlan)
		if err != nil {
			return err
		}
		if err := errors.Join(plan.SetDescriptors(AttrPlanEngineConfig, cfg), plan.Finalize()); err != nil {
			errs = append(errs, fmt.Errorf("config %d: %w", i, err))
			continue
		}
		if p.Workspace, err = plan.Int64(AttrPlanWorkspaceSize); err != nil {
			return err
		}
		p.plan, p.Config = plan, i
		p.Engine = -1
		if eng, err := cfg.Descriptors(AttrEngineCfgEngine, DescEngine, 1); err == nil && len(eng) == 1 {
			p.descs = append(p.descs, eng[0])
			if v, err := eng[0].Int64(AttrEngineGlobalIndex); err == nil {
				p.Engine = v
			}
		}
		return nil
	}
	return fmt.Errorf("cudnn graph: no execution plan of the %d engine configs finalizes: %w", len(cfgs), errors.Join(errs...))
}

// Pack is a variant pack: the device pointers of the graph's tensors and
// the workspace, for Execute.
type Pack struct {
	d *Descriptor
}

// NewPack builds the variant pack of a run: ptrs holds a device pointer
// for each non-virtual, non-constant tensor of the graph, by UID;
// workspace is Workspace bytes of device memory (0 when none is needed).
func (p *Plan) NewPack(ptrs map[int64]uintptr, workspace uintptr) (*Pack, error) {
	if p == nil || p.plan == nil {
		return nil, fmt.Errorf("cudnn variant pack: %w", ErrNil)
	}
	var uids []int64
	var vals []uintptr
	for _, t := range p.Graph.Tensors {
		switch {
		case t.Virtual:
			continue
		case t.ByValue:
			uids, vals = append(uids, t.UID), append(vals, p.byValue[t.UID])
		default:
			v, ok := ptrs[t.UID]
			if !ok || v == 0 {
				return nil, fmt.Errorf("cudnn variant pack: no device pointer for %s (UID %d)", t.Name, t.UID)
			}
			uids, vals = append(uids, t.UID), append(vals, v)
		}
	}
	if p.Workspace > 0 && workspace == 0 {
		return nil, fmt.Errorf("cudnn variant pack: the plan needs %d bytes of workspace", p.Workspace)
	}
	d, err := NewDescriptor(DescVariantPack)
	if err != nil {
		return nil, err
	}
	// The pointer arrays hold addresses, not Go pointers: uintptrs, read
	// during the calls only.
	ws := workspace
	err = errors.Join(d.SetInt64s(AttrPackUIDs, uids...),
		d.set(AttrPackPointers, TypeVoidPtr, len(vals), unsafe.Pointer(&vals[0])),
		d.set(AttrPackWorkspace, TypeVoidPtr, 1, unsafe.Pointer(&ws)),
		d.Finalize())
	if err != nil {
		d.Destroy()
		return nil, fmt.Errorf("cudnn variant pack: %w", err)
	}
	return &Pack{d: d}, nil
}

// Destroy releases the pack; a nil or destroyed one is a no-op.
func (k *Pack) Destroy() error {
	if k == nil {
		return nil
	}
	return k.d.Destroy()
}

// Execute enqueues the plan with pack on h's stream (cudnnBackendExecute).
func (p *Plan) Execute(h *Handle, pack *Pack) error {
	if p == nil || pack == nil {
		return fmt.Errorf("cudnnBackendExecute: %w", ErrNil)
	}
	return execute(h, p.plan, pack.d)
}

// Destroy releases the plan's descriptors and constants; a nil or
// destroyed plan is a no-op.
func (p *Plan) Destroy() error {
	if p == nil {
		return nil
	}
	var errs []error
	for i := len(p.descs) - 1; i >= 0; i-- {
		errs = append(errs, p.descs[i].Destroy())
	}
	p.descs, p.plan = nil, nil
	if p.scalars != nil {
		C.free(p.scalars)
		p.scalars = nil
	}
	return errors.Join(errs...)
}
