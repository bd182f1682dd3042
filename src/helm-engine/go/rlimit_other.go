//go:build !unix && !js

package main

// limitData: no RLIMIT_DATA here; debug.SetMemoryLimit alone bounds the heap, softly.
func limitData(uint64) error { return nil }
