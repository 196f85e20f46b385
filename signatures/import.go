package signatures

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/inject"
)

// Limits on what a trace may claim for one GPU activity.
const (
	maxDurNS   = int64(3600e9) // one hour
	maxLaunch  = int64(1) << 31
	maxBytes   = int64(1) << 44
	maxEventTS = int64(1) << 62
)

// Options tune Import.
type Options struct {
	// Workload names the workload; by default it is derived from the file
	// name ("h100_bloom-560m_prefill.trace.json.gz" is "bloom-560m_prefill").
	Workload string
	// Kernels, when set, are the launches `kreplay capture` recorded for
	// the same inference, with their module images and snapshots in
	// KernelsFS: the trace's kernels are matched to them (Set.Kernels) and
	// each signature gets the binary it replays as launched.
	Kernels   *inject.Index
	KernelsFS fs.FS
}

// ImportFile reads the Kineto trace at path and returns its signature set.
func ImportFile(path string, opt Options) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Import(f, path, opt)
}

// op is a CPU op kept for linking.
type op struct {
	name   string
	tid    int64
	ts     int64
	dur    int64
	inputs int32 // index into importer.inputs
}

// call is a CUDA runtime or driver call kept for linking.
type call struct {
	ext    int64
	hasExt bool
	tid    int64
	ts     int64
	graph  bool // a CUDA graph's launch (cudaGraphLaunch, cuGraphLaunch)
}

// activity is one GPU activity with what its signature needs.
type activity struct {
	index    int
	act      Activity
	name     string
	ext      int64
	hasExt   bool
	corr     int64
	hasCorr  bool
	device   int64
	stream   int64
	ts, dur  int64
	launch   Launch
	bytes    int64
	coll     *Collective
	op       int32 // linked op, -1 if none
	linkedBy string
	// call is the recorded call the kernel matched (an index into the
	// bundle's calls, matchKernels), -1 if none.
	call int
}

type importer struct {
	name      string
	ops       []op
	byExt     map[int64]int32
	calls     map[int64]call
	acts      []activity
	inputs    [][]Input
	inputKeys map[string]int32
	key       []byte
	lx        lexer
	sigOf     []*Signature  // per activity, set by build
	kernels   *inject.Index // the bundle's recorded launches, nil for a plain trace
}

// Import reads a Kineto trace from r (plain or gzip JSON) and reduces it to
// a signature set; name is the file name used in errors and in the set.
func Import(r io.Reader, name string, opt Options) (*Set, error) {
	rd, err := NewReader(r, name)
	if err != nil {
		return nil, err
	}
	im := &importer{
		name:      name,
		byExt:     map[int64]int32{},
		calls:     map[int64]call{},
		inputKeys: map[string]int32{},
	}
	events := 0
	for rd.Scan() {
		events++
		if err := im.add(rd.Event()); err != nil {
			ev := rd.Event()
			return nil, &FormatError{File: name, Offset: ev.Offset, Event: ev.Index, Err: err}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if opt.Kernels != nil {
		im.matchKernels(opt.Kernels)
	}
	set := im.build()
	if opt.Kernels != nil {
		set.Kernels = im.attachBinaries(opt.Kernels, opt.KernelsFS, im.sigOf)
	}
	set.Version = FormatVersion
	set.Source = sourceOf(name, rd.Header(), opt)
	set.Source.Events = events
	set.Source.Bytes = rd.Offset()
	return set, nil
}

// add records one event.
func (im *importer) add(ev *Event) error {
	switch ev.Cat {
	case "cpu_op":
		if !ev.HasExternal {
			return nil
		}
		if ev.Dur < 0 {
			return fmt.Errorf("cpu_op %q has negative duration", ev.Name)
		}
		in, err := im.internInputs(ev.RawInputs)
		if err != nil {
			return fmt.Errorf("cpu_op %q: %w", ev.Name, err)
		}
		idx := int32(len(im.ops))
		im.ops = append(im.ops, op{name: ev.Name, tid: ev.TID, ts: ev.TS, dur: ev.Dur, inputs: in})
		// The innermost op wins: the shortest among those sharing the id.
		if prev, ok := im.byExt[ev.ExternalID]; !ok || ev.Dur < im.ops[prev].dur {
			im.byExt[ev.ExternalID] = idx
		}
	case "cuda_runtime", "cuda_driver":
		if ev.HasCorr {
			im.calls[ev.Correlation] = call{ext: ev.ExternalID, hasExt: ev.HasExternal, tid: ev.TID, ts: ev.TS,
				graph: strings.Contains(ev.Name, "GraphLaunch")}
		}
	case "kernel", "gpu_memcpy", "gpu_memset":
		return im.addActivity(ev)
	}
	return nil
}

func (im *importer) addActivity(ev *Event) error {
	a := activity{
		index: ev.Index, name: ev.Name, ext: ev.ExternalID, hasExt: ev.HasExternal,
		corr: ev.Correlation, hasCorr: ev.HasCorr, device: ev.Device, stream: ev.Stream,
		ts: ev.TS, dur: ev.Dur, op: -1, call: -1,
	}
	if ev.Name == "" {
		return fmt.Errorf("%s event has no name", ev.Cat)
	}
	if !ev.HasTS {
		return fmt.Errorf("%s %q has no ts", ev.Cat, ev.Name)
	}
	if ev.Dur < 0 || ev.Dur > maxDurNS {
		return fmt.Errorf("%w: %s %q lasts %d ns", errAbsurd, ev.Cat, ev.Name, ev.Dur)
	}
	if ev.TS < -maxEventTS || ev.TS > maxEventTS {
		return fmt.Errorf("%w: %s %q starts at %d ns", errAbsurd, ev.Cat, ev.Name, ev.TS)
	}
	switch ev.Cat {
	case "kernel":
		a.act = ActivityKernel
		if !ev.HasLaunch {
			return fmt.Errorf("kernel %q has no grid", ev.Name)
		}
		for i := 0; i < 3; i++ {
			if ev.Grid[i] < 1 || ev.Grid[i] > maxLaunch || ev.Block[i] < 1 || ev.Block[i] > maxLaunch {
				return fmt.Errorf("%w: kernel %q launch grid %v block %v", errAbsurd, ev.Name, ev.Grid, ev.Block)
			}
		}
		if ev.SharedMem < 0 || ev.SharedMem > maxLaunch || ev.Registers < 0 || ev.Registers > 1<<16 {
			return fmt.Errorf("%w: kernel %q shared memory %d, registers %d", errAbsurd, ev.Name, ev.SharedMem, ev.Registers)
		}
		a.launch = Launch{Grid: ev.Grid, Block: ev.Block, SharedMem: ev.SharedMem, Registers: ev.Registers}
		if ev.Collective != "" || isNCCLKernel(ev.Name) {
			c, err := collectiveOf(ev)
			if err != nil {
				return err
			}
			a.coll = c
		}
	case "gpu_memcpy", "gpu_memset":
		a.act = ActivityMemcpy
		if ev.Cat == "gpu_memset" {
			a.act = ActivityMemset
		}
		if !ev.HasBytes {
			return fmt.Errorf("%s %q has no bytes", ev.Cat, ev.Name)
		}
		if ev.Bytes < 0 || ev.Bytes > maxBytes {
			return fmt.Errorf("%w: %s %q of %d bytes", errAbsurd, ev.Cat, ev.Name, ev.Bytes)
		}
		a.bytes = ev.Bytes
	}
	im.acts = append(im.acts, a)
	return nil
}

var ncclName = regexp.MustCompile(`^nccl(?:Dev)?Kernel_([A-Za-z]+)_([A-Za-z]+)_([a-z0-9]+)_([A-Z_]+?)_(LL128|LL|SIMPLE)\b`)

// collectiveOf reads an NCCL kernel's collective parameters.
func collectiveOf(ev *Event) (*Collective, error) {
	c := &Collective{
		Op: ev.Collective, Nelems: ev.InNelems, OutNelems: ev.OutNelems,
		DType: DType(ev.DType), Ranks: ev.GroupSize, Group: ev.PGName,
	}
	if m := ncclName.FindStringSubmatch(ev.Name); m != nil {
		if c.Op == "" {
			c.Op = strings.ToLower(m[1])
		}
		c.Reduction, c.Algorithm, c.Protocol = m[2], m[4], m[5]
		if c.DType == "" {
			c.DType = m[3]
		}
	}
	if ev.InNelems < 0 || ev.InNelems > maxNumel || ev.OutNelems < 0 || ev.OutNelems > maxNumel || ev.GroupSize < 0 || ev.GroupSize > 1<<20 {
		return nil, fmt.Errorf("%w: collective %q nelems %d/%d group %d", errAbsurd, ev.Name, ev.InNelems, ev.OutNelems, ev.GroupSize)
	}
	if r, ok := intList(ev.PGRanks); ok && len(r) > 0 {
		c.GroupRanks = r
	}
	return c, nil
}

// internInputs parses an op's inputs once per distinct raw text.
func (im *importer) internInputs(raw [4][]byte) (int32, error) {
	im.key = im.key[:0]
	for _, r := range raw {
		im.key = append(im.key, r...)
		im.key = append(im.key, 0)
	}
	if i, ok := im.inputKeys[string(im.key)]; ok {
		return i, nil
	}
	ins, err := parseInputs(raw, &im.lx)
	if err != nil {
		return 0, err
	}
	i := int32(len(im.inputs))
	im.inputs = append(im.inputs, ins)
	im.inputKeys[string(im.key)] = i
	return i, nil
}

// link ties each activity to the CPU op that launched it: the innermost
// cpu_op sharing its External id, else the op of the runtime call with the
// same correlation (by that call's External id, or by the innermost op on
// the call's thread enclosing it in time).
func (im *importer) link() {
	var byThread map[int64][]int32
	for i := range im.acts {
		a := &im.acts[i]
		if a.hasExt {
			if o, ok := im.byExt[a.ext]; ok {
				a.op, a.linkedBy = o, "external_id"
				continue
			}
		}
		if !a.hasCorr {
			continue
		}
		c, ok := im.calls[a.corr]
		if !ok {
			continue
		}
		if c.hasExt {
			if o, ok := im.byExt[c.ext]; ok {
				a.op, a.linkedBy = o, "correlation"
				continue
			}
		}
		if byThread == nil {
			byThread = im.opsByThread()
		}
		if o := im.enclosing(byThread[c.tid], c.ts); o >= 0 {
			a.op, a.linkedBy = o, "correlation"
		}
	}
}

func (im *importer) opsByThread() map[int64][]int32 {
	m := map[int64][]int32{}
	for i, o := range im.ops {
		m[o.tid] = append(m[o.tid], int32(i))
	}
	for _, ids := range m {
		sort.SliceStable(ids, func(x, y int) bool { return im.ops[ids[x]].ts < im.ops[ids[y]].ts })
	}
	return m
}

// enclosing returns the innermost op of ids (sorted by start) whose span
// holds t, or -1.
func (im *importer) enclosing(ids []int32, t int64) int32 {
	i := sort.Search(len(ids), func(i int) bool { return im.ops[ids[i]].ts > t })
	for j := i - 1; j >= 0; j-- {
		o := im.ops[ids[j]]
		if o.ts <= t && t <= o.ts+o.dur {
			return ids[j]
		}
	}
	return -1
}

// group is the activities of one signature.
type group struct {
	sig  *Signature
	durs []int64
}

// groupKey is what makes activities one signature: activities with equal
// keys replay identically. It is a comparable struct, so grouping
// allocates nothing per activity.
type groupKey struct {
	act    Activity
	name   string
	op     string
	inputs int32
	launch Launch
	bytes  int64
	coll   collKey
	// bin, the matched launch's key, tells apart the kernels of an op
	// that records no shapes: those a CUDA graph runs link to the
	// compiled region around its launch, whatever they compute.
	bin string
}

// apartByLaunch gives the groups that only their launches' keys tell
// apart IDs and labels of their own; a group alone keeps the ID it has
// without binaries.
func apartByLaunch(groups map[groupKey]*group) {
	apart := map[groupKey]int{}
	for k := range groups {
		k.bin = ""
		apart[k]++
	}
	for k, g := range groups {
		if b := k.bin; b != "" {
			if k.bin = ""; apart[k] > 1 {
				g.sig.ID = launchID(g.sig.ID, b)
				g.sig.Label += " [launch " + b[:min(8, len(b))] + "]"
			}
		}
	}
}

// build links, dedupes and classifies the activities.
func (im *importer) build() *Set {
	im.link()
	groups := map[groupKey]*group{}
	var order []*group
	sigOf := make([]*group, len(im.acts))
	for i := range im.acts {
		a := &im.acts[i]
		k := groupKey{act: a.act, name: a.name, inputs: -1, launch: a.launch, bytes: a.bytes}
		if a.op >= 0 {
			k.op, k.inputs = im.ops[a.op].name, im.ops[a.op].inputs
		}
		if k.inputs < 0 || len(im.inputs[k.inputs]) == 0 {
			k.bin = im.launchKey(a)
		}
		if c := a.coll; c != nil {
			k.coll = collKey{c.Op, c.Nelems, c.OutNelems, c.DType, c.Ranks, c.Reduction, c.Algorithm, c.Protocol, c.Group}
		}
		g, ok := groups[k]
		if !ok {
			var ins []Input
			if k.inputs >= 0 {
				ins = im.inputs[k.inputs]
			}
			s := &Signature{ID: identityHash(a, k.op, ins), Activity: a.act, Kernel: a.name, Op: k.op, Inputs: ins}
			if a.act == ActivityKernel {
				l := a.launch
				s.Launch = &l
			}
			describe(s, a)
			if c, ok := im.calls[a.corr]; ok && a.hasCorr && c.graph {
				inGraph(s)
			}
			g = &group{sig: s}
			groups[k] = g
			order = append(order, g)
		}
		g.sig.Count++
		g.durs = append(g.durs, a.dur)
		sigOf[i] = g
	}
	for _, g := range order {
		g.sig.TracedNS = stats(g.durs)
	}
	apartByLaunch(groups)
	// Split-K reduce kernels, a grouped GEMM's preparing kernel, and
	// memsets that cuBLAS issues inside a GEMM op, belong to the GEMM kernel
	// of the same op call: they are replayed with it and their time is not
	// counted twice.
	gemmOfOp := map[int32]*Signature{}
	for i := range im.acts {
		a := &im.acts[i]
		s := sigOf[i].sig
		if a.op >= 0 && s.Class == ClassGEMM && !strings.HasSuffix(s.Label, splitKSuffix) && !isGroupedPrep(s.Kernel) {
			if _, ok := gemmOfOp[a.op]; !ok {
				gemmOfOp[a.op] = s
			}
		}
	}
	for i := range im.acts {
		a := &im.acts[i]
		s := sigOf[i].sig
		if a.op >= 0 && (strings.HasSuffix(s.Label, splitKSuffix) || isGroupedPrep(s.Kernel) || (s.Class == ClassMemset && gemmOps[s.Op])) {
			if g := gemmOfOp[a.op]; g != nil && s.PartOf == "" {
				s.PartOf = g.ID
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i].sig, order[j].sig
		if a.TracedNS.Total != b.TracedNS.Total {
			return a.TracedNS.Total > b.TracedNS.Total
		}
		return a.ID < b.ID
	})
	im.sigOf = make([]*Signature, len(im.acts))
	for i, g := range sigOf {
		im.sigOf[i] = g.sig
	}
	set := &Set{}
	index := map[*group]int{}
	for i, g := range order {
		set.Signatures = append(set.Signatures, g.sig)
		index[g] = i
	}
	// The ordered timeline.
	perm := make([]int, len(im.acts))
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(x, y int) bool { return im.acts[perm[x]].ts < im.acts[perm[y]].ts })
	tl := make([]Invocation, len(perm))
	for k, i := range perm {
		a := &im.acts[i]
		tl[k] = Invocation{Sig: index[sigOf[i]], Device: a.device, Stream: a.stream, Start: a.ts, Dur: a.dur}
		switch a.linkedBy {
		case "external_id":
			set.Links.ByExternalID++
		case "correlation":
			set.Links.ByCorrelation++
		default:
			set.Links.Unlinked++
		}
	}
	set.Links.Activities = len(im.acts)
	set.Timeline = tl
	set.Summary = Summarize(tl)
	return set
}

// collKey is the comparable part of a Collective.
type collKey struct {
	op                          string
	nelems, out                 int64
	dtype                       string
	ranks                       int64
	reduction, algorithm, proto string
	group                       string
}

const splitKSuffix = " (split-K reduce)"

// identityHash is the signature ID: a hash of a canonical text of what
// makes invocations replay identically, and of nothing machine- or
// run-specific (no device, stream, time or address).
func identityHash(a *activity, op string, ins []Input) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s", a.act, a.name, op, inputsIdentity(ins))
	switch a.act {
	case ActivityKernel:
		fmt.Fprintf(&b, "\x00%v %v %d %d", a.launch.Grid, a.launch.Block, a.launch.SharedMem, a.launch.Registers)
		if c := a.coll; c != nil {
			fmt.Fprintf(&b, "\x00%s %d %d %s %d", c.Op, c.Nelems, c.OutNelems, c.DType, c.Ranks)
		}
	default:
		fmt.Fprintf(&b, "\x00%d", a.bytes)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:6])
}

// launchID is the ID of the signature id whose invocations a recorded
// launch's key tells apart from others of the same identity.
func launchID(id, key string) string {
	sum := sha256.Sum256([]byte(id + "\x00launch\x00" + key))
	return hex.EncodeToString(sum[:6])
}

// inputsIdentity is a canonical text of an op's inputs for hashing.
func inputsIdentity(ins []Input) string {
	var b strings.Builder
	for _, in := range ins {
		b.WriteString(in.Type)
		b.WriteByte('|')
		writeInts(&b, in.Shape)
		b.WriteByte('|')
		writeInts(&b, in.Strides)
		b.WriteByte('|')
		b.WriteString(in.Value)
		for _, t := range in.List {
			b.WriteByte('|')
			writeInts(&b, t.Shape)
			b.WriteByte('/')
			writeInts(&b, t.Strides)
		}
		b.WriteByte(';')
	}
	return b.String()
}

func writeInts(b *strings.Builder, v []int64) {
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
}

// describe classifies a new signature and derives its replay parameters.
func describe(s *Signature, a *activity) {
	s.Tier, s.Class = classify(a.act, s.Op, s.Kernel, a.coll != nil)
	s.Label = label(s, a)
	switch s.Class {
	case ClassMemcpy:
		k, host := copyKind(s.Kernel)
		s.Memory = &MemoryOp{Kind: k, Bytes: a.bytes, Host: host}
		if k == "" {
			s.Unreplayable = "unreplayable: unknown copy direction in " + strconv.Quote(s.Kernel)
		}
	case ClassMemset:
		s.Memory = &MemoryOp{Bytes: a.bytes}
	case ClassCollective:
		s.Collective = a.coll
		if a.coll == nil || a.coll.Nelems <= 0 || a.coll.DType == "" || a.coll.Op == "" {
			s.Unreplayable = "unreplayable: the trace gives no collective name, element count or dtype for this NCCL kernel"
		}
	case ClassGEMM:
		if s.Op == "" {
			s.Unreplayable = "unreplayable: no CPU op is linked to this GEMM kernel, so its shapes are unknown"
			return
		}
		g, err := deriveGEMM(s.Op, s.Inputs)
		if err != nil {
			s.Unreplayable = "unreplayable: " + err.Error()
			return
		}
		// cuBLAS's nvjet kernels name a fused bias epilogue ("..._bias_TNT"):
		// where the trace names one, it says what PyTorch did (a scaled
		// GEMM's bias has no unfused path).
		if strings.HasPrefix(s.Kernel, "nvjet") && g.Bias && g.Scaled == nil && !strings.Contains(s.Kernel, "_bias") {
			g.Bias, g.BiasType = false, ""
		}
		s.GEMM = g
	default:
		if s.Op == "" {
			s.Unreplayable = "unreplayable: no CPU op is linked to this kernel, so its tensor shapes are unknown"
			return
		}
		var p *TensorParams
		var err error
		if kind := TritonKind(s.Op); kind != "" && kind != "tem" {
			p, err = deriveTriton(kind, s.Op, s.Inputs)
		} else {
			p, err = deriveTensor(s.Class, s.Op, s.Inputs)
		}
		if err != nil {
			s.Unreplayable = "unreplayable: " + err.Error()
			return
		}
		s.Tensor = p
	}
}

// inGraph marks a signature whose kernels a CUDA graph's launch ran. The
// trace links them to the op around the launch (torch.compile's region),
// which records no shapes: the label names the kernel, replay parameters
// derived from the op are none, and the reason says what would replay
// them.
func inGraph(s *Signature) {
	s.Graph = true
	if s.Activity == ActivityKernel && s.Op != "" && len(s.Inputs) == 0 {
		// The op tells nothing apart: the kernel's name does.
		s.Label = shortKernel(s.Kernel) + " in " + shortOp(s.Op)
		if isSplitKReduce(s.Kernel) {
			s.Label += splitKSuffix
		}
	}
	if s.Unreplayable != "" && len(s.Inputs) == 0 {
		s.Unreplayable = "unreplayable: ran in a CUDA graph, whose kernels the trace links to no op shapes (" +
			strings.TrimPrefix(s.Unreplayable, "unreplayable: ") +
			"); kreplay capture records the graph's kernels and replays them as launched"
	}
}

// label is a short human description of a signature.
func label(s *Signature, a *activity) string {
	switch {
	case s.Activity == ActivityMemcpy || s.Activity == ActivityMemset:
		l := strings.SplitN(s.Kernel, " (", 2)[0] + " " + strconv.FormatInt(a.bytes, 10) + " B"
		if s.Op != "" {
			l += " in " + shortOp(s.Op)
		}
		return l
	case a.coll != nil:
		return fmt.Sprintf("%s %s[%d] x%d ranks", a.coll.Op, a.coll.DType, a.coll.Nelems, a.coll.Ranks)
	case s.Op == "":
		return shortKernel(s.Kernel)
	}
	var b strings.Builder
	b.WriteString(shortOp(s.Op))
	for _, in := range s.Inputs {
		switch {
		case in.IsTensor():
			fmt.Fprintf(&b, " %s%s", DType(in.Type), shapeText(in.Shape))
		case in.List != nil:
			b.WriteString(" [")
			for i, t := range in.List {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(shapeText(t.Shape))
			}
			b.WriteString("]")
		}
	}
	if isSplitKReduce(s.Kernel) {
		b.WriteString(splitKSuffix)
	}
	return b.String()
}

func shortOp(op string) string { return strings.TrimPrefix(op, "aten::") }

func shapeText(s []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// shortKernel strips a demangled kernel name to its function name.
func shortKernel(k string) string {
	if i := strings.IndexAny(k, "<("); i > 0 {
		k = k[:i]
	}
	if i := strings.LastIndex(k, " "); i >= 0 {
		k = k[i+1:]
	}
	return k
}

func stats(d []int64) Stats {
	if len(d) == 0 {
		return Stats{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var total int64
	for _, v := range s {
		total += v
	}
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Stats{Total: total, Min: s[0], Median: med, Mean: total / int64(n), Max: s[n-1]}
}

var gpuPrefix = regexp.MustCompile(`^[0-9]*x?[a-z]+[0-9]+[a-z]*_`)

// WorkloadName derives a workload name from a trace file name:
// "h100_bloom-560m_prefill.trace.json.gz" gives "bloom-560m_prefill" and
// "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz" gives
// "llama-7b-tp2_prefill".
func WorkloadName(path string) string {
	base := filepath.Base(path)
	for _, suf := range []string{".gz", ".json", ".trace", ".pt"} {
		base = strings.TrimSuffix(base, suf)
	}
	if i := strings.Index(base, ".rank"); i >= 0 {
		base = base[:i]
	}
	if loc := gpuPrefix.FindStringIndex(base); loc != nil && loc[1] < len(base) {
		base = base[loc[1]:]
	}
	return base
}

func sourceOf(name string, h *Header, opt Options) Source {
	src := Source{
		File:        filepath.Base(name),
		Workload:    opt.Workload,
		GPUs:        h.DeviceProperties,
		CUDADriver:  cudaVersion(h.CUDADriverVersion),
		CUDARuntime: cudaVersion(h.CUDARuntimeVersion),
		CUPTI:       h.CUPTIVersion,
		TraceID:     h.TraceID,
		WorldSize:   1,
	}
	if src.Workload == "" {
		src.Workload = WorkloadName(name)
	}
	if d := h.DistributedInfo; d != nil {
		src.Rank, src.WorldSize = d.Rank, max(d.WorldSize, 1)
	}
	return src
}

// cudaVersion formats a CUDA version number (13000 is "13.0").
func cudaVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
