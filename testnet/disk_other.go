//go:build !unix

package testnet

import "io/fs"

func allocated(info fs.FileInfo) int64 { return info.Size() }
