# Shared helpers of the hack/ scripts.
step() { printf '\n==> %s\n' "$*" >&2; }

# npm ci when node_modules is missing or older than the lock file.
ensure_node_modules() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    step "install npm dependencies"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}
