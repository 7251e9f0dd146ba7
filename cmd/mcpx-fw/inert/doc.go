// Package inert is the one way text an upstream supplied reaches a person:
// it turns any string into one that a terminal (or, later, a browser
// console) shows as written and cannot obey. An upstream is the attacker;
// its text must never clear or repaint the operator's screen, reorder what
// they read, or hold characters they cannot see.
//
// # What is escaped
//
// A character is shown as it is only when Shown says so: a graphic
// character (letter, mark, number, punctuation, symbol, space separator)
// that is not default-ignorable; and a combining mark only while the run
// of marks it belongs to is no longer than MaxMarks. Everything else is
// written as a visible escape, never emitted:
//
//   - C0 controls, DEL and C1 controls (ESC, CSI U+009B, NEL, …): \x1b,
//     \x7f, \u009b; tab, carriage return and newline as \t, \r, \n;
//   - format characters (category Cf): the bidi embeddings, overrides and
//     isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and
//     U+061C, zero-width space and joiners, U+FEFF, the soft hyphen, the tag
//     characters U+E0000–U+E007F: \u202e, \u200b, \U000e0041;
//   - the other invisible ones: variation selectors (which can carry hidden
//     bytes after any character) and the other default-ignorable code
//     points (Hangul fillers, U+034F), line and paragraph separators,
//     private-use, surrogate and unassigned code points;
//   - each byte of invalid UTF-8: \xff;
//   - each combining mark (Mn, Me) past MaxMarks in a row: a character
//     may carry up to three marks as they are, which is what real scripts
//     put on one character; the rest of a pile of them ("Zalgo" text,
//     which draws over the neighbouring lines) is written \u0301.
//
// The forms are Go's: \xNN below U+0080 is that control character and at
// or above 0x80 a byte that is not UTF-8 (a C1 control is \u0080–\u009f,
// never \x80), \uNNNN and \UNNNNNNNN are code points. Tab is escaped too,
// not expanded: a tab would split a table cell (text/tabwriter) and its
// width is the terminal's to choose, and the reader must be able to tell it
// from spaces.
//
// A backslash in the input is itself escaped, as \\, in every form meant
// for reading (Text, Line, Quote, Word). Without that an escape would be
// ambiguous: an upstream could type the four characters \x1b and the
// operator could not tell them from a real ESC that was escaped. With it,
// a single backslash on screen always starts an escape this package wrote.
//
// # Where it applies
//
// Two layers, both required:
//
//   - Fields, at the point a string is laid out: Text for prose shown as
//     lines (newlines kept), Line for a one-line field, Quote for a string
//     value whose bounds must show, Word for ids and names, JSON for
//     encoded JSON (which stays valid JSON with the same value). Only the
//     field knows its format: whether a newline may break the line, whether
//     quotes delimit it, so escaping there is what makes the output
//     unambiguous.
//   - The sink, Writer, wrapped once around a command's output: it escapes
//     whatever a field forgot (newline is the only control it lets
//     through). It does not double backslashes, since the fields it carries
//     have done so already; it exists so that no path to the screen, not
//     even a forgotten one, can emit a control or invisible character.
//
// Fields give unambiguity and the sink gives the guarantee; either alone is
// not enough. The package knows nothing of terminals: it writes plain
// text, so the same functions serve any reader.
//
// inert imports only the standard library.
package inert
