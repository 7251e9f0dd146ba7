// Package render lays out for a person what the firewall holds for
// review, and makes the document an operator edits before approving.
//
// It owns: review show (Show) and its sections by kind (a sampling
// request and its completion, an elicitation's form or URL and the user's
// answer, a roots request and list), the queue as list and watch print it
// (List, Arrival) and their JSON shapes, the commands an operator may run
// on an item (Actions), an item's cost against its server's budget (Cost,
// CostOf), the edit document and its application back to the stored JSON
// (EditDoc, ApplyEdit, LineDiff), serve's status for a person (Status),
// and the terminal geometry all of it is cut into rows for (Layout,
// ForTerminal).
//
// Every string it prints that came from an upstream, a policy, the store
// or a listener goes through package inert first, and every line but the
// commands to copy is cut into rows of the layout, so that no text can
// pass for the renderer's own lines.
//
// It reads review items and telemetry values it is handed; it opens no
// store, reads no configuration, builds no logger and imports neither
// cobra nor viper: the commands in package main read those and call it.
package render
