package protocol

import "bytes"

// Line is one line of a record file or message, numbered from 1.
type Line struct {
	N     int
	Bytes []byte
}

// SplitLines cuts JSONL data into lines, dropping a trailing "\r" (files
// written on Windows) and empty lines. The lines alias data.
func SplitLines(data []byte) []Line {
	var out []Line
	n := 0
	for len(data) > 0 {
		n++
		i := bytes.IndexByte(data, '\n')
		var line []byte
		if i < 0 {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		out = append(out, Line{N: n, Bytes: line})
	}
	return out
}
