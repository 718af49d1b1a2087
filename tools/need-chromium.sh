#!/usr/bin/env bash
# The browser and JupyterLab tests drive Debian's chromium (never a downloaded browser). Where it is
# missing, say so in one line with the command that installs it, before a long build and instead of a
# failure deep inside a test; run as root, install it. OPTBOOK_CHROMIUM names another executable
# (then nothing is installed: apt-get puts chromium at /usr/bin/chromium only).
set -uo pipefail
exe="${OPTBOOK_CHROMIUM:-/usr/bin/chromium}"
[ -x "$exe" ] && exit 0
if [ "$(id -u)" = 0 ] && [ "$exe" = /usr/bin/chromium ]; then
  echo "$exe missing: installing Debian's chromium (apt-get install -y chromium)"
  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
  [ -x "$exe" ] && exit 0
fi
echo "$exe missing: the browser tests need Debian's chromium; install it with: apt-get install -y chromium (as root)" >&2
exit 1
