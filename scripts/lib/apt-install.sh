# Sourced by the ensure-*.sh scripts: installs what the tests need from Debian's packages when this
# is root on a machine with apt-get, else says why not and how, and exits 1 (the caller's tests then
# skip loudly, or fail under CI).
# usage: apt_install <script> <what is missing> <how to get it elsewhere> <package>...
apt_install() {
  local script="$1" what="$2" elsewhere="$3"
  shift 3
  if [ "$(id -u)" != "0" ]; then
    echo "$script: $what is not installed and this is not root; install it with: sudo apt-get install -y $* ($elsewhere)" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$script: $what is not installed and apt-get is not available here; $elsewhere" >&2
    exit 1
  fi
  echo "$script: installing Debian's $* (apt-get)…" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq "$@" >&2
}
