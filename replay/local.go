package replay

import (
	"fmt"

	"github.com/kreplay/kreplay/internal/cuda"
)

// LocalGPU is one CUDA device of this machine, as the driver numbers and
// names it.
type LocalGPU struct {
	Index int
	Name  string
}

// LocalGPUs lists this machine's CUDA devices. It returns the driver's
// error where there is no driver, and an empty list where it sees none.
func LocalGPUs() ([]LocalGPU, error) {
	if err := cuda.Init(); err != nil {
		return nil, err
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return nil, err
	}
	gpus := make([]LocalGPU, 0, n)
	for i := range n {
		dev, err := cuda.DeviceGet(i)
		if err != nil {
			return nil, err
		}
		name, err := dev.Name()
		if err != nil {
			return nil, fmt.Errorf("replay: name of device %d: %w", i, err)
		}
		gpus = append(gpus, LocalGPU{Index: i, Name: name})
	}
	return gpus, nil
}

// SameKind splits gpus into the indices of those of the same kind (name)
// as the one of index first, first among them, and the others. One
// process has one driver, so the name is what can differ. Where first is
// not in gpus, same is just first.
func SameKind(gpus []LocalGPU, first int) (same []int, others []LocalGPU) {
	name, found := "", false
	for _, g := range gpus {
		if g.Index == first {
			name, found = g.Name, true
		}
	}
	same = []int{first}
	if !found {
		return same, nil
	}
	for _, g := range gpus {
		switch {
		case g.Index == first:
		case g.Name == name:
			same = append(same, g.Index)
		default:
			others = append(others, g)
		}
	}
	return same, others
}
