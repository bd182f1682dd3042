//go:build unix

package main

import "syscall"

// limitData bounds the process's private writable mappings (RLIMIT_DATA: Go's heap arenas,
// stacks and runtime data): a mapping past it fails and Go dies "fatal error: out of memory",
// which the host reports as the render's memory limit.
func limitData(bytes uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: bytes, Max: bytes})
}
