// Package rawjson reads JSON by its bytes, without decoding it: the
// members of an object and the elements of an array, at any depth and
// without recursion, and the frames of a stream of JSON messages, each
// handed on whole with how deep it nests. relay's raw screen and its
// frame path read upstream and host messages with it before (or instead
// of) the SDK's decoder.
//
// It owns no state beyond one Splitter's buffers and imports nothing of
// relay.
package rawjson
