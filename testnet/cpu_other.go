//go:build !unix

package testnet

func processCPU() (float64, bool) { return 0, false }
