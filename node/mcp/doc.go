// Package mcp serves a memory to AI agents over the Model Context Protocol,
// with the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// The tools are:
//
//   - remember: report one event (a surprise: a correction, an error, an
//     environment fact, a surprise or a note), with the fields of SPEC §2,
//     validated by protocol.Event.Validate; a bad event is answered with a
//     tool error that names the field, never with a protocol error;
//   - recall: the lessons most relevant to a task description;
//   - lessons: the lesson view, optionally in one state;
//   - show: one lesson with every record held for it (its provenance);
//   - sleep: turn the reported events into lessons now.
//
// Every lesson an agent reads is framed as an observation from other agents'
// experience with its state and its number of confirmations
// ("Observed (common, 3 confirmations): ..."), never as an instruction.
//
// The package owns the MCP surface only: it talks to a memory through
// node.Service (an open memory or a running node's local API) and imports
// nothing of the project but node and protocol. It must not import store,
// gossip or any transport.
package mcp
