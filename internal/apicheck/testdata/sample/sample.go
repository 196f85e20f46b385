package sample

import (
	h "example.com/sample/internal/hidden"
)

// Handle is a public name for the internal type: allowed.
type Handle = h.Handle

func Good(x *Handle) int { return 0 }

func BadParam(o h.Opts) {}

func BadResult() *h.Handle { return nil }

func unexported(o h.Opts) {}

type T struct {
	Field   h.Opts
	private h.Opts
	h.Handle
}

func (T) Method(f func(h.Opts)) {}

type t struct{}

func (t) Method(o h.Opts) {}

type I interface {
	Do(*h.Handle) error
}

var V h.Opts

type Wrapped h.Opts

var (
	Setting    = 3
	ErrSample  = error(nil)
	unexported = 1
)
