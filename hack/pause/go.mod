module binnacle.dev/hack/pause

go 1.22

toolchain go1.26.8
