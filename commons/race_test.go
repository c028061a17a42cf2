//go:build race

package commons

const raceEnabled = true
