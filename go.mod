module github.com/kreplay/kreplay

go 1.26.0

require github.com/NVIDIA/go-nvml v0.13.0-1

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
)
