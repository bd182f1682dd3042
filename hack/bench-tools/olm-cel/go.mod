module github.com/binnacle/hack/bench-tools/olm-cel

go 1.22.0

toolchain go1.26.8

require (
	github.com/blang/semver/v4 v4.0.0
	github.com/google/cel-go v0.20.1
	github.com/operator-framework/api v0.27.0
)

require (
	github.com/antlr4-go/antlr/v4 v4.13.0 // indirect
	github.com/stoewer/go-strcase v1.3.0 // indirect
	golang.org/x/exp v0.0.0-20240213143201-ec583247a57a // indirect
	golang.org/x/text v0.16.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20240528184218-531527333157 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20240701130421-f6361c86f094 // indirect
	google.golang.org/protobuf v1.34.2 // indirect
)
