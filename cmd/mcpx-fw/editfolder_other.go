//go:build !unix

package main

import "io/fs"

// privateMode: Windows has no mode bits for this (Go reports 0777 for every
// folder); the folder is private as the user's profile, where the state dir
// is, is.
const privateMode = false

// ownedByMe: the owner is in the ACLs of the user's profile, not checked
// here.
func ownedByMe(fs.FileInfo) bool { return true }
