module github.com/binnacle/hack/bench-tools/deppy

go 1.22

toolchain go1.26.8

require github.com/operator-framework/deppy v0.3.0

require github.com/go-air/gini v1.0.4 // indirect
