# Shared helpers of the hack/ scripts.
step() { printf '\n==> %s\n' "$*" >&2; }

# npm ci when node_modules is missing or older than the lock file.
ensure_node_modules() {
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
