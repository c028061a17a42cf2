// Package folder is the shared-folder transport of SPEC §10 "Folder".
//
// A folder is a directory that several memories can see (a synced
// directory, a network share, a repository). Each memory owns exactly one
// file in it, DIR/<origin>.jsonl, holding all of its current records, one
// signed line each. Write replaces that one file atomically (temp file in
// DIR, fsync, rename, fsync of DIR) and touches nothing else; Read takes
// every other file named <16 lowercase hex>.jsonl, verifies it with
// protocol.VerifyBatch bound to the origin the file is named after (a line
// of another origin is refused, and at most 1,000 records are taken), and
// hands the accepted, parsed records to a Deliver callback with the
// scope "folder:<absolute dir>". A Watcher polls the directory and calls
// back when a *.jsonl file changes.
//
// A file that is damaged (truncated, garbage, lines of another origin, too
// large) is reported line by line in the Report; its good lines are still
// taken and the other files are not affected.
//
// The package imports protocol and the standard library only; it must not
// import node, store or any other transport. The node merges what it is
// handed through its one receive path.
package folder
