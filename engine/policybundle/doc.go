// Package policybundle fetches mcpx-fw's policy as an OPA bundle, with
// OPA's own machinery: the service client of v1/plugins/rest, the
// Downloader of v1/download (polling, ETag, long polling, backoff) and the
// reader and signature verification of v1/bundle. It hands verified
// bundles to the engine, which compiles them under its strict rules and
// decides whether they become the deciding policy, and it keeps the last
// bundle the engine activated on disk so a restart works offline.
//
// It does not compile or activate anything itself: the seam is "verified
// bytes in, *bundle.Bundle out", so nothing read from a bundle that did
// not verify reaches the engine or the disk.
package policybundle
