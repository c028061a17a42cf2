// Package node is one memory at work: it takes events from agents, runs
// sleep (consolidate, verify pass, sign), receives records from every
// transport through one path (Deliver), and answers the views a person or an
// agent reads (lessons, show, recall). The daemon in this package starts and
// stops the transports and serves the local HTTP API.
//
// node imports protocol, store and the transports; the transports never
// import node: they hand verified records to Memory.Deliver.
package node
