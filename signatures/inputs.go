package signatures

import (
	"errors"
	"fmt"
)

// Input is one argument of an op as the profiler recorded it: a tensor
// (Type is its dtype, with Shape and Strides), a list of tensors (List), or
// a scalar or other value (Value holds the profiler's text for it).
type Input struct {
	Type    string   `json:"type,omitempty"`
	Shape   []int64  `json:"shape,omitempty"`
	Strides []int64  `json:"strides,omitempty"`
	Value   string   `json:"value,omitempty"`
	List    []Tensor `json:"list,omitempty"`
}

// Tensor is one element of a tensor-list input.
type Tensor struct {
	Shape   []int64 `json:"shape"`
	Strides []int64 `json:"strides"`
}

// IsTensor reports whether the input is a single tensor: the profiler
// writes a dtype name as its type ("c10::Half", "float", "long int", ...).
func (in Input) IsTensor() bool {
	switch in.Type {
	case "", "Scalar", "ScalarList", "TensorList", "GenericList", "None", "String", "Device", "Layout", "ScalarType", "MemoryFormat", "Generator":
		return false
	}
	return in.List == nil
}

// Numel returns the number of elements of a tensor input.
func (in Input) Numel() int64 { return numel(in.Shape) }

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// Limits on what a trace may claim; larger values are rejected as absurd.
const (
	maxDim   = 1 << 40
	maxNumel = 1 << 50
)

var errAbsurd = errors.New("absurd value")

// parseInputs decodes the four raw input fields of a cpu_op event.
func parseInputs(raw [4][]byte, l *lexer) ([]Input, error) {
	if raw[0] == nil && raw[1] == nil && raw[2] == nil && raw[3] == nil {
		return nil, nil
	}
	var ins []Input
	// Input Dims
	*l = lexer{b: raw[0], buf: l.buf}
	if raw[0] != nil {
		err := l.array(func() error {
			in, err := parseShape(l, checkDims)
			ins = append(ins, in)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("Input Dims: %w", err)
		}
	}
	// Input Strides
	if raw[1] != nil {
		*l = lexer{b: raw[1], buf: l.buf}
		i := 0
		err := l.array(func() error {
			s, err := parseShape(l, checkStrides)
			if err != nil {
				return err
			}
			if i >= len(ins) {
				return errors.New("more strides than dims")
			}
			if len(s.List) != len(ins[i].List) || len(s.Shape) != len(ins[i].Shape) {
				return fmt.Errorf("input %d: strides do not match dims", i)
			}
			ins[i].Strides = s.Shape
			for j := range s.List {
				ins[i].List[j].Strides = s.List[j].Shape
			}
			i++
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("Input Strides: %w", err)
		}
	}
	for k, field := range [2]string{"Input type", "Concrete Inputs"} {
		b := raw[2+k]
		if b == nil {
			continue
		}
		*l = lexer{b: b, buf: l.buf}
		i := 0
		err := l.array(func() error {
			s, err := l.str()
			if err != nil {
				return err
			}
			for i >= len(ins) {
				ins = append(ins, Input{})
			}
			if k == 0 {
				ins[i].Type = string(s)
			} else {
				ins[i].Value = string(s)
			}
			i++
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
	}
	return ins, nil
}

// parseShape reads one entry of Input Dims or Input Strides: a list of
// integers, or a list of such lists for a tensor list, checked by check.
func parseShape(l *lexer, check func([]int64) error) (Input, error) {
	var in Input
	if l.peek() != '[' {
		return in, l.errf("expected a list of dimensions")
	}
	// Peek past '[' to see whether elements are lists.
	save := l.i
	l.i++
	nested := l.peek() == '['
	l.i = save
	if !nested {
		dims, err := l.ints(nil)
		if err != nil {
			return in, err
		}
		if err := check(dims); err != nil {
			return in, err
		}
		in.Shape = dims
		return in, nil
	}
	in.List = []Tensor{}
	err := l.array(func() error {
		dims, err := l.ints(nil)
		if err != nil {
			return err
		}
		if err := check(dims); err != nil {
			return err
		}
		in.List = append(in.List, Tensor{Shape: dims})
		return nil
	})
	return in, err
}

func checkDims(dims []int64) error {
	n := int64(1)
	for _, d := range dims {
		if d < 0 || d > maxDim {
			return fmt.Errorf("%w: dimension %d", errAbsurd, d)
		}
		if d > 0 && n > maxNumel/d {
			return fmt.Errorf("%w: more than %d elements", errAbsurd, int64(maxNumel))
		}
		if d > 0 {
			n *= d
		}
	}
	if len(dims) > 64 {
		return fmt.Errorf("%w: %d dimensions", errAbsurd, len(dims))
	}
	return nil
}

// checkStrides rejects negative or absurd strides. Unlike dims, strides
// are not multiplied: a large tensor's outer stride is itself large.
func checkStrides(strides []int64) error {
	for _, s := range strides {
		if s < 0 || s > maxNumel {
			return fmt.Errorf("%w: stride %d", errAbsurd, s)
		}
	}
	if len(strides) > 64 {
		return fmt.Errorf("%w: %d strides", errAbsurd, len(strides))
	}
	return nil
}
