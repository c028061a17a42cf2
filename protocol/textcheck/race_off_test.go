//go:build !race

package textcheck

const raceEnabled = false
