#!/usr/bin/env bash
# Debian packages the test suite needs: bubblewrap (the sandbox's namespace layer; tests/sandbox runs every
# hostile program inside it as well as without it) and libseccomp2 (loaded by pyseccomp for the seccomp
# deny-list). Idempotent and quiet: installs only what is missing. Called from .ci/run.
set -euo pipefail

packages=(bubblewrap libseccomp2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"

# bwrap needs unprivileged user namespaces (or root); say so early rather than fail in the tests.
if ! bwrap --unshare-all --die-with-parent --ro-bind / / true 2>/dev/null; then
  echo "warning: bwrap is installed but cannot create namespaces here (tests/sandbox will report it)" >&2
fi
