package node

// RandomText and IDOfSeed are the view tests' texts and keys, for the
// benchmark of package node_test (which reaches node/mcp).
var (
	RandomText = randomText
	IDOfSeed   = idOfSeed
)
