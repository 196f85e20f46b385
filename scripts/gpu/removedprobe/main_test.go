package main

import (
	"slices"
	"testing"
)

func TestMidway(t *testing.T) {
	for _, c := range []struct {
		runs [][]int
		n    int
		want []int
	}{
		{[][]int{{1, 2}, {10, 11}}, 20, []int{5, 15}},
		{[][]int{{1, 2}, {3, 4}}, 5, []int{2, 4}}, // adjacent runs: right after each
		{[][]int{{0, 9}}, 10, []int{9}},
	} {
		if got := midway(c.runs, c.n); !slices.Equal(got, c.want) {
			t.Errorf("midway(%v, %d) = %v, want %v", c.runs, c.n, got, c.want)
		}
	}
}
