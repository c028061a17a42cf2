//go:build !race

package testnet

const raceDetector = false
