#!/usr/bin/env bash
# Takes a screenshot of a Sluice manager's status page with headless Chromium.
#
#   scripts/status-screenshot.sh http://127.0.0.1:7471/ status.png [WIDTHxHEIGHT]
#
# The page polls /api/status every second; the screenshot is taken after a few
# seconds of (virtual) time so that both charts have points. Needs chromium
# (Debian: apt-get install -y chromium).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 URL OUT.png [WIDTHxHEIGHT]" >&2
  exit 2
fi
url="$1"
out="$2"
size="${3:-1400x1100}"

browser="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$browser" ]]; then
  echo "$0: chromium not found; install it: apt-get update && apt-get install -y chromium" >&2
  exit 1
fi

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
out_abs="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"

"$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --disable-quic \
  --no-first-run --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size="${size/x/,}" \
  --virtual-time-budget=4000 --screenshot="$out_abs" "$url" >/dev/null 2>&1

if [[ ! -s "$out_abs" ]]; then
  echo "$0: chromium wrote no screenshot to $out_abs" >&2
  exit 1
fi
echo "$out_abs"
