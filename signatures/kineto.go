package signatures

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A FormatError reports invalid or truncated trace input: the file, the
// byte offset in the uncompressed JSON, and the index of the trace event
// (-1 when the error is outside traceEvents).
type FormatError struct {
	File   string
	Offset int64
	Event  int
	Err    error
}

func (e *FormatError) Error() string {
	where := fmt.Sprintf("byte %d", e.Offset)
	if e.Event >= 0 {
		where = fmt.Sprintf("event %d at byte %d", e.Event, e.Offset)
	}
	return fmt.Sprintf("%s: %s: %v", e.File, where, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ErrNotKineto is wrapped by errors for JSON input that is not a Kineto
// (PyTorch profiler) Chrome trace.
var ErrNotKineto = errors.New("not a Kineto trace")

// Header holds the trace-level fields of a Kineto trace. It is complete
// once Reader.Scan has returned false without error.
type Header struct {
	SchemaVersion       int                `json:"schemaVersion,omitempty"`
	DeviceProperties    []DeviceProperties `json:"deviceProperties,omitempty"`
	TraceID             string             `json:"trace_id,omitempty"`
	CUDADriverVersion   int                `json:"cuda_driver_version,omitempty"`
	CUDARuntimeVersion  int                `json:"cuda_runtime_version,omitempty"`
	CUPTIVersion        int                `json:"cupti_version,omitempty"`
	BaseTimeNanoseconds int64              `json:"baseTimeNanoseconds,omitempty"`
	DistributedInfo     *DistributedInfo   `json:"distributedInfo,omitempty"`
	TraceName           string             `json:"traceName,omitempty"`
}

// DeviceProperties describes one GPU as the trace records it.
type DeviceProperties struct {
	ID             int    `json:"id"`
	Name           string `json:"name"`
	TotalGlobalMem int64  `json:"totalGlobalMem,omitempty"`
	ComputeMajor   int    `json:"computeMajor,omitempty"`
	ComputeMinor   int    `json:"computeMinor,omitempty"`
	NumSMs         int    `json:"numSms,omitempty"`
}

// DistributedInfo is the trace's record of a multi-rank run.
type DistributedInfo struct {
	Backend   string `json:"backend,omitempty"`
	Rank      int    `json:"rank"`
	WorldSize int    `json:"world_size"`
}

// Event is one trace event, reduced to the fields kreplay uses. Times are
// integer nanoseconds on the trace's clock. The Reader reuses one Event:
// its raw input fields are valid only until the next call to Scan.
type Event struct {
	Index  int   // position in traceEvents
	Offset int64 // byte offset of the event in the uncompressed JSON

	Phase string // "X", "s", "f", "M", ...
	Cat   string // cpu_op, kernel, gpu_memcpy, gpu_memset, cuda_runtime, ...
	Name  string
	PID   int64 // -1 when the trace gives a non-numeric pid
	TID   int64 // -1 when the trace gives a non-numeric tid
	TS    int64 // start, ns
	Dur   int64 // duration, ns
	HasTS bool

	ExternalID  int64
	HasExternal bool
	Correlation int64
	HasCorr     bool
	Device      int64
	Stream      int64
	Grid        [3]int64
	Block       [3]int64
	HasLaunch   bool
	SharedMem   int64
	Registers   int64
	Bytes       int64
	HasBytes    bool

	// NCCL kernels.
	Collective string
	InNelems   int64
	OutNelems  int64
	GroupSize  int64
	DType      string
	PGName     string
	PGRanks    string

	// Raw JSON of the op's "Input Dims", "Input Strides", "Input type" and
	// "Concrete Inputs" (cpu_op events); nil when absent.
	RawInputs [4][]byte
}

// Reader reads a Kineto trace one event at a time, like bufio.Scanner:
//
//	r, err := NewReader(f, name)
//	for r.Scan() {
//		ev := r.Event()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
//
// Plain and gzip-compressed JSON are both accepted.
type Reader struct {
	name    string
	s       *stream
	hdr     Header
	ev      Event
	state   int // 0 start, 1 top-level keys, 2 in traceEvents, 3 done
	n       int
	err     error
	lx      lexer
	events  bool
	strings map[string]string
}

// NewReader returns a Reader for the trace in r; name is used in errors.
func NewReader(r io.Reader, name string) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &FormatError{File: name, Event: -1, Err: fmt.Errorf("gzip: %w", err)}
		}
		return &Reader{name: name, s: newStream(zr), strings: map[string]string{}}, nil
	}
	return &Reader{name: name, s: newStream(br), strings: map[string]string{}}, nil
}

// Header returns the trace-level fields read so far.
func (r *Reader) Header() *Header { return &r.hdr }

// Event returns the event read by the last successful Scan.
func (r *Reader) Event() *Event { return &r.ev }

// Err returns the first error met, or nil at a clean end of input.
func (r *Reader) Err() error { return r.err }

// Offset returns the number of uncompressed bytes consumed so far.
func (r *Reader) Offset() int64 { return r.s.offset() }

func (r *Reader) fail(event int, off int64, err error) bool {
	var le *lexError
	if errors.As(err, &le) {
		off += int64(le.at)
		err = errors.New(le.msg)
	}
	r.err = &FormatError{File: r.name, Offset: off, Event: event, Err: err}
	r.state = 3
	return false
}

// Scan advances to the next trace event. It returns false at the end of the
// input or on error; Err tells which.
func (r *Reader) Scan() bool {
	for {
		switch r.state {
		case 0:
			c, err := r.s.peek()
			if err == io.EOF {
				return r.fail(-1, r.s.offset(), fmt.Errorf("%w: empty input", ErrNotKineto))
			}
			if err != nil {
				return r.fail(-1, r.s.offset(), err)
			}
			if c != '{' {
				return r.fail(-1, r.s.offset(), fmt.Errorf("%w: the top level is not a JSON object", ErrNotKineto))
			}
			r.s.pos++
			r.state = 1
			if c, err := r.s.peek(); err == nil && c == '}' {
				r.s.pos++
				return r.finish()
			}
		case 1:
			if !r.topField() {
				return false
			}
		case 2:
			c, err := r.s.peek()
			if err != nil {
				return r.fail(r.n, r.s.offset(), r.s.readErr())
			}
			switch c {
			case ']':
				r.s.pos++
				r.state = 1
				if !r.afterField() {
					return false
				}
				continue
			case ',':
				if r.n == 0 {
					return r.fail(r.n, r.s.offset(), errors.New("unexpected ','"))
				}
				r.s.pos++
			default:
				if r.n > 0 {
					return r.fail(r.n, r.s.offset(), fmt.Errorf("expected ',' or ']' after event, found %q", c))
				}
			}
			if _, err := r.s.peek(); err != nil {
				return r.fail(r.n, r.s.offset(), r.s.readErr())
			}
			off := r.s.offset()
			err = r.s.parse(func(b []byte) (int, error) {
				err := r.parseEvent(b, off)
				return r.lx.i, err
			})
			if err != nil {
				return r.fail(r.n, off, err)
			}
			r.n++
			return true
		default:
			return false
		}
	}
}

// topField reads one top-level key and its value, entering traceEvents.
func (r *Reader) topField() bool {
	off := r.s.offset()
	rawKey, err := r.s.value()
	if err != nil {
		return r.fail(-1, off, err)
	}
	r.lx = lexer{b: rawKey, buf: r.lx.buf}
	key, err := r.lx.str()
	if err == nil {
		err = r.lx.end()
	}
	if err != nil {
		return r.fail(-1, off, err)
	}
	k := string(key)
	if err := r.s.expect(':'); err != nil {
		return r.fail(-1, r.s.offset(), err)
	}
	if k == "traceEvents" {
		if r.events {
			return r.fail(-1, r.s.offset(), errors.New("traceEvents appears twice"))
		}
		if err := r.s.expect('['); err != nil {
			return r.fail(-1, r.s.offset(), fmt.Errorf("%w: traceEvents is not an array", ErrNotKineto))
		}
		r.events = true
		r.state = 2
		return true
	}
	voff := r.s.offset()
	val, err := r.s.value()
	if err != nil {
		return r.fail(-1, voff, err)
	}
	if err := r.headerField(k, val); err != nil {
		return r.fail(-1, voff, fmt.Errorf("field %q: %w", k, err))
	}
	return r.afterField()
}

// afterField consumes the ',' or '}' after a top-level value.
func (r *Reader) afterField() bool {
	c, err := r.s.peek()
	if err != nil {
		return r.fail(-1, r.s.offset(), r.s.readErr())
	}
	switch c {
	case ',':
		r.s.pos++
		return true
	case '}':
		r.s.pos++
		return r.finish()
	}
	return r.fail(-1, r.s.offset(), fmt.Errorf("expected ',' or '}' after a top-level field, found %q", c))
}

func (r *Reader) finish() bool {
	r.state = 3
	if c, err := r.s.peek(); err != io.EOF {
		if err != nil {
			return r.fail(-1, r.s.offset(), err)
		}
		return r.fail(-1, r.s.offset(), fmt.Errorf("unexpected %q after the top-level object", c))
	}
	if !r.events {
		return r.fail(-1, r.s.offset(), fmt.Errorf("%w: no traceEvents array", ErrNotKineto))
	}
	return false
}

// headerField decodes the trace-level fields kreplay records and checks the
// syntax of the others.
func (r *Reader) headerField(key string, val []byte) error {
	var dst any
	switch key {
	case "schemaVersion":
		dst = &r.hdr.SchemaVersion
	case "deviceProperties":
		dst = &r.hdr.DeviceProperties
	case "trace_id":
		dst = &r.hdr.TraceID
	case "cuda_driver_version":
		dst = &r.hdr.CUDADriverVersion
	case "cuda_runtime_version":
		dst = &r.hdr.CUDARuntimeVersion
	case "cupti_version":
		dst = &r.hdr.CUPTIVersion
	case "baseTimeNanoseconds":
		dst = &r.hdr.BaseTimeNanoseconds
	case "distributedInfo":
		dst = &r.hdr.DistributedInfo
	case "traceName":
		dst = &r.hdr.TraceName
	default:
		r.lx = lexer{b: val, buf: r.lx.buf}
		if err := r.lx.skip(0); err != nil {
			return err
		}
		return r.lx.end()
	}
	return json.Unmarshal(val, dst)
}

func (r *Reader) intern(b []byte) string {
	if s, ok := r.strings[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(r.strings) < 1<<20 {
		r.strings[s] = s
	}
	return s
}

// parseEvent decodes one event object from the start of raw; the bytes
// after it are left for the caller.
func (r *Reader) parseEvent(raw []byte, off int64) error {
	ev := &r.ev
	*ev = Event{Index: r.n, Offset: off, PID: -1, TID: -1, Device: -1, Stream: -1}
	l := &r.lx
	*l = lexer{b: raw, buf: l.buf}
	if l.peek() != '{' {
		return l.errf("event is not a JSON object")
	}
	err := l.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "ph":
			var s []byte
			s, err = l.str()
			ev.Phase = r.intern(s)
		case "cat":
			var s []byte
			s, err = l.str()
			ev.Cat = r.intern(s)
		case "name":
			var s []byte
			s, err = l.str()
			ev.Name = r.intern(s)
		case "pid":
			ev.PID, err = r.id()
		case "tid":
			ev.TID, err = r.id()
		case "ts":
			ev.TS, err = l.micros()
			ev.HasTS = true
		case "dur":
			ev.Dur, err = l.micros()
		case "args":
			err = r.parseArgs()
		default:
			err = l.skip(1)
		}
		return err
	})
	return err
}

// id reads a pid or tid, which Kineto writes as a number or a label.
func (r *Reader) id() (int64, error) {
	if r.lx.peek() == '"' {
		_, err := r.lx.str()
		return -1, err
	}
	return r.lx.int()
}

func (r *Reader) parseArgs() error {
	l := &r.lx
	ev := &r.ev
	if l.peek() != '{' {
		return l.skip(1)
	}
	return l.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "External id":
			ev.ExternalID, err = l.int()
			ev.HasExternal = true
		case "correlation":
			ev.Correlation, err = l.int()
			ev.HasCorr = true
		case "device":
			ev.Device, err = l.int()
		case "stream":
			ev.Stream, err = l.int()
		case "grid":
			err = r.dim3(&ev.Grid)
			ev.HasLaunch = true
		case "block":
			err = r.dim3(&ev.Block)
		case "shared memory":
			ev.SharedMem, err = l.int()
		case "registers per thread":
			ev.Registers, err = l.int()
		case "bytes":
			ev.Bytes, err = l.int()
			ev.HasBytes = true
		case "Collective name":
			ev.Collective, err = r.strField()
		case "In msg nelems":
			ev.InNelems, err = l.int()
		case "Out msg nelems":
			ev.OutNelems, err = l.int()
		case "Group size":
			ev.GroupSize, err = l.int()
		case "dtype":
			ev.DType, err = r.strField()
		case "Process Group Name":
			ev.PGName, err = r.strField()
		case "Process Group Ranks":
			ev.PGRanks, err = r.strField()
		case "Input Dims":
			ev.RawInputs[0], err = r.rawValue()
		case "Input Strides":
			ev.RawInputs[1], err = r.rawValue()
		case "Input type":
			ev.RawInputs[2], err = r.rawValue()
		case "Concrete Inputs":
			ev.RawInputs[3], err = r.rawValue()
		default:
			err = l.skip(2)
		}
		return err
	})
}

func (r *Reader) strField() (string, error) {
	s, err := r.lx.str()
	return r.intern(s), err
}

// rawValue checks a value's syntax and returns its bytes.
func (r *Reader) rawValue() ([]byte, error) {
	r.lx.ws()
	start := r.lx.i
	if err := r.lx.skip(2); err != nil {
		return nil, err
	}
	return r.lx.b[start:r.lx.i], nil
}

func (r *Reader) dim3(d *[3]int64) error {
	i := 0
	return r.lx.array(func() error {
		v, err := r.lx.int()
		if err != nil {
			return err
		}
		if i >= 3 {
			return r.lx.errf("launch dimension with more than 3 entries")
		}
		d[i] = v
		i++
		return nil
	})
}
