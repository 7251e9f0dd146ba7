// Package secret reads files that hold a secret only this account may
// reach: the seal key serve replicas share (seal.key_file) and the ops
// listener's token (metrics.token_file). It refuses a file others could
// read or replace, and its errors never hold the file's bytes. It imports
// only the standard library.
package secret
