#!/usr/bin/env bash
# Debian packages the test suite needs: bubblewrap (the sandbox's namespace layer; tests/sandbox runs every
# hostile program inside it as well as without it), libseccomp2 (loaded by pyseccomp for the seccomp
# deny-list), tmux (tests/decrypto plays hot-seat Decrypto through a real terminal) and chromium (tests/decrypto
# loads the HTML transcript viewer in headless Chromium). Idempotent and quiet: installs only what is missing.
# Called from .ci/run.
#
# It never aborts the run: where apt-get is missing or the install fails it warns and goes on, and the
# sandbox tests then fail by name (their bwrap-mode cases say "apt-get install bubblewrap"; the Decrypto tests
# say "apt-get install tmux" or "chromium"), so CI stays strict without this script hiding why.
set -uo pipefail

packages=(bubblewrap libseccomp2 tmux chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "warning: apt-get not found; cannot install ${missing[*]} (install them with your package manager)" >&2
  else
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
      sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    if $sudo apt-get update -qq >/dev/null && \
       $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
      echo "installed: ${missing[*]}"
    else
      echo "warning: could not install ${missing[*]} with apt-get; the tests that need them will say so" >&2
    fi
  fi
fi

# Always probe, installed just now or long ago: bwrap needs unprivileged user namespaces (or root).
if ! command -v bwrap >/dev/null 2>&1; then
  echo "warning: bwrap is not on PATH; the sandbox's bwrap-mode tests will fail (apt-get install bubblewrap)" >&2
elif ! bwrap --unshare-all --die-with-parent --ro-bind / / true 2>/dev/null; then
  echo "warning: bwrap is installed but cannot create namespaces here (the bwrap-mode tests will fail;" \
       "enable unprivileged user namespaces, e.g. sysctl kernel.unprivileged_userns_clone=1)" >&2
fi
exit 0
