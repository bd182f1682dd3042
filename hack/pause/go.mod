module binnacle.dev/hack/pause

go 1.22
