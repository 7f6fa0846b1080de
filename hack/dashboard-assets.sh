#!/usr/bin/env bash
# dashboard-assets.sh fetches the dashboard's JavaScript libraries from npm
# (npm pack, no node_modules) and copies their built files into
# internal/dashboard/assets/vendor, where go:embed takes them; the files are
# committed, so building clustersync needs neither npm nor the network. Run it
# to change a version below; it prints each file's SHA-256.
#   htmx.org      https://htmx.org (BSD Zero Clause)
#   htmx-ext-sse  https://htmx.org/extensions/sse/ (BSD Zero Clause)
set -euo pipefail
HTMX_VERSION=2.0.8
HTMX_SSE_VERSION=2.2.4
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/internal/dashboard/assets/vendor"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "htmx.org@$HTMX_VERSION" "htmx-ext-sse@$HTMX_SSE_VERSION" >/dev/null
mkdir -p htmx sse "$out"
tar xzf "htmx.org-$HTMX_VERSION.tgz" -C htmx
tar xzf "htmx-ext-sse-$HTMX_SSE_VERSION.tgz" -C sse
cp htmx/package/dist/htmx.min.js "$out/htmx.min.js"
cp htmx/package/LICENSE "$out/htmx.LICENSE"
cp sse/package/dist/sse.min.js "$out/htmx-ext-sse.min.js"
cp sse/package/LICENSE "$out/htmx-ext-sse.LICENSE"
printf 'htmx.org %s\nhtmx-ext-sse %s\n' "$HTMX_VERSION" "$HTMX_SSE_VERSION" >"$out/VERSIONS"
(cd "$out" && sha256sum htmx.min.js htmx-ext-sse.min.js)
