# Shared helpers of the hack/ scripts.
step() { printf '\n==> %s\n' "$*" >&2; }

# Builds the Go package PKG, at the version DIR's go.mod pins, into .cache/bench-bin/NAME only
# when that is missing (the cache), and prints its path. Low priority and one package at a time:
# the machine is shared. GO_FLAGS... go to `go build` (-trimpath, -tags ...); CGO_ENABLED from
# the environment, default 0.
# usage: build_bench_tool DIR NAME PKG [GO_FLAGS...]
build_bench_tool() {
  local dir=$1 name=$2 pkg=$3
  shift 3
  local out
  out="$(cd "$dir/../../.." && pwd)/.cache/bench-bin/$name"
  if [ ! -x "$out" ]; then
    mkdir -p "$(dirname "$out")"
    (cd "$dir" && CGO_ENABLED=${CGO_ENABLED:-0} nice -n 19 go build -p 1 "$@" -o "$out" "$pkg")
  fi
  echo "$out"
}

# npm ci when node_modules is missing or older than the lock file. Never through a symlink: a
# git worktree sharing another checkout's node_modules (the lock file's checkout time makes it
# look "older") would have npm ci empty the other checkout's packages and install its own.
ensure_node_modules() {
  if [ -L node_modules ]; then
    [ package-lock.json -nt node_modules/.package-lock.json ] && step "node_modules links to $(readlink node_modules): not reinstalled through the link (run npm ci there if it is stale)"
    return 0
  fi
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    step "install npm dependencies"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}

# Debian packages the tests and the demo use: the OCI registry, htpasswd (registry auth tests),
# openssl and git. Installed with apt-get only when missing.
ensure_apt_packages() {
  local missing=()
  command -v docker-registry >/dev/null || [ -x /usr/bin/docker-registry ] || missing+=(docker-registry)
  command -v htpasswd >/dev/null || missing+=(apache2-utils)
  command -v openssl >/dev/null || missing+=(openssl)
  command -v git >/dev/null || missing+=(git)
  command -v curl >/dev/null || missing+=(curl)
  command -v chromium >/dev/null || missing+=(chromium)
  [ ${#missing[@]} -eq 0 ] && return 0
  step "install Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    $sudo apt-get update >/dev/null
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
  }
}

# Debian packages the real node of `cluster up --real-node` runs on: runc (the OCI runtime
# containerd's shim starts), iptables (kube-proxy's Service rules) and conntrack. Only when missing.
ensure_real_node_packages() {
  local missing=()
  command -v runc >/dev/null || [ -x /usr/sbin/runc ] || missing+=(runc)
  command -v iptables >/dev/null || [ -x /usr/sbin/iptables ] || missing+=(iptables)
  command -v conntrack >/dev/null || [ -x /usr/sbin/conntrack ] || missing+=(conntrack)
  [ ${#missing[@]} -eq 0 ] && return 0
  step "install Debian packages for the real node: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    $sudo apt-get update >/dev/null
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
  }
}
