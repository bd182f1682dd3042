// The pinned github.com/openshift/api module: `binnacle cluster up --openshift` takes the
// OpenShift APIs' CRD manifests (and, for the APIs OpenShift serves itself rather than as
// CRDs, the OpenAPI definitions) from it. See hack/build-tools.sh (openshift-crds).
module binnacle.dev/hack/openshift-api

go 1.26.0

toolchain go1.26.8

require github.com/openshift/api v0.0.0-20251020135558-286504b695bc
