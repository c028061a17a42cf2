// Package web is the node's read-only web page: a single page app served
// from files embedded in the binary (plain HTML, CSS and JavaScript, no build
// step, no CDN: it works offline).
//
// The page reads the node's local HTTP API (GET /lessons?all=1, GET
// /lessons/{hash}, GET /status), polls it every two seconds so it follows the
// node while it sleeps and receives, and shows every lesson held with its
// state, strength, kind, origins and confirmers; a search box; a page per
// lesson (#/lesson/<hash>) with every record, when and by which scope it
// arrived, who confirmed it and its state history; the peers and topics; and
// the records refused by reason. Routes live in the URL's fragment:
// #/?q=term&state=common narrows the list, #/lesson/<hash> shows one lesson.
//
// Lessons come from strangers, so the page builds its DOM with textContent
// and never parses data as HTML; Handler serves it with a
// Content-Security-Policy of default-src 'self' (no inline script, no other
// origin) and X-Content-Type-Options: nosniff.
//
// The package imports only the standard library: node mounts Handler at "/"
// through node.APIOptions.Web, and the API routes, being more specific, win.
package web
