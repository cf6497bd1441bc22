//go:build !race

package fss

const raceEnabled = false
