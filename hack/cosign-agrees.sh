#!/usr/bin/env bash
# Checks that cosign itself agrees with Binnacle's signatures, both ways, on a loopback
# docker-registry:
#   1. an image signed by `binnacle sign --key` verifies with `cosign verify --key`;
#   2. an image signed by `cosign sign --key` verifies with `binnacle sign verify --key`;
#   3. cosign refuses an unsigned image and a signature by another key, as Binnacle does.
# cosign is built from the Go module proxy (hack/bench-tools/cosign, cached in .cache/bench-bin);
# the first build takes long on a shared machine, so this is a script, not part of CI's tests.
# Prints "N passed, N failed" and exits non-zero on any failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cosign="$(bash hack/bench-tools/cosign/build.sh | tail -1)"
binnacle() { BINNACLE_FROM_SOURCE=1 node "$root/bin/binnacle.js" "$@"; }
work="$(mktemp -d)"
reg_pid=""
cleanup() { [ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
host="127.0.0.1:$port"
cat > "$work/registry.yml" <<YAML
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $work/storage}, delete: {enabled: true}}
http: {addr: $host}
YAML
docker-registry serve "$work/registry.yml" 2>"$work/registry.log" & reg_pid=$!
for _ in $(seq 50); do curl -fs "http://$host/v2/" >/dev/null && break; sleep 0.2; done

passed=0; failed=0
check() { # name, command...: expects success
  local name="$1"; shift
  if "$@" >"$work/out" 2>&1; then passed=$((passed+1)); echo "ok: $name"; else failed=$((failed+1)); echo "FAILED: $name"; sed 's/^/  /' "$work/out"; fi
}
refuse() { # name, command...: expects failure
  local name="$1"; shift
  if "$@" >"$work/out" 2>&1; then failed=$((failed+1)); echo "FAILED (accepted): $name"; sed 's/^/  /' "$work/out"; else passed=$((passed+1)); echo "ok: $name"; fi
}

mkdir -p "$work/a" "$work/b" "$work/c"
echo "kind: ConfigMap" > "$work/a/x.yaml"; echo "kind: Secret" > "$work/b/x.yaml"; echo "kind: Service" > "$work/c/x.yaml"
for n in a b c; do binnacle image build --layer "$work/$n:/manifests" --layout "$work/layout-$n" --push "$host/demo/$n:v1" >/dev/null; done
(cd "$work" && binnacle sign generate-key --output-key-prefix binnacle >/dev/null)
(cd "$work" && COSIGN_PASSWORD='' "$cosign" generate-key-pair --output-key-prefix cosign >/dev/null 2>&1)
cv() { COSIGN_PASSWORD='' "$cosign" verify --key "$1" --insecure-ignore-tlog=true --allow-insecure-registry "$2"; }

check "binnacle signs demo/a" binnacle sign "$host/demo/a:v1" --key "$work/binnacle.key"
check "cosign verify --key accepts what binnacle signed" cv "$work/binnacle.pub" "$host/demo/a:v1"
refuse "cosign verify refuses binnacle's signature with another key" cv "$work/cosign.pub" "$host/demo/a:v1"
refuse "cosign verify refuses an unsigned image" cv "$work/binnacle.pub" "$host/demo/c:v1"
check "cosign signs demo/b" env COSIGN_PASSWORD='' "$cosign" sign --key "$work/cosign.key" --tlog-upload=false --allow-insecure-registry --yes "$host/demo/b:v1"
check "binnacle sign verify accepts what cosign signed" binnacle sign verify "$host/demo/b:v1" --key "$work/cosign.pub"
refuse "binnacle sign verify refuses cosign's signature with another key" binnacle sign verify "$host/demo/b:v1" --key "$work/binnacle.pub"
check "binnacle adds its signature beside cosign's (key rotation)" binnacle sign "$host/demo/b:v1" --key "$work/binnacle.key"
check "cosign still verifies its own signature after binnacle added one" cv "$work/cosign.pub" "$host/demo/b:v1"
check "cosign verifies binnacle's added signature" cv "$work/binnacle.pub" "$host/demo/b:v1"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
