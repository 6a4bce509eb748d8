#!/usr/bin/env bash
# visual.sh — render the key-distribution picture to PNG with headless
# Chromium, to look at (`make visual`; not part of `make test`).
# Builds the demo database, adds some read and write traffic, writes
# BUILD/visual/telemetry.svg with .keyviz and renders it to
# BUILD/visual/telemetry.png (1200x800).
# Run: bash tests/visual.sh BUILD
set -euo pipefail
BUILD=$(cd "${1:?usage: tests/visual.sh BUILD_DIR}" && pwd)
WCS=$BUILD/bin/wcs
OUT=$BUILD/visual
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
  echo "visual.sh: chromium is not installed (make visual installs it)" >&2
  exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT"
PROFILE=$(mktemp -d "${TMPDIR:-/tmp}/wcs-visual-profile.XXXXXX")
trap 'rm -rf "$PROFILE"' EXIT

"$WCS" demo "$OUT/demo.db" </dev/null >/dev/null
# traffic: hot writes on one device, reads spread over the phones
"$WCS" "$OUT/demo.db" \
  "WITH RECURSIVE d(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM d WHERE n < 400)
   INSERT INTO telemetry(device, id, day, connected_cell)
   SELECT 'tablet', (SELECT id FROM telemetry WHERE device = 'tablet' LIMIT 1),
          20200501 + n % 31, n % 2 FROM d" \
  "SELECT count(*) FROM telemetry WHERE device = 'phone'" \
  "SELECT count(*) FROM telemetry WHERE device = 'phone'" \
  "SELECT count(*) FROM telemetry WHERE device = 'watch'" >/dev/null
"$WCS" "$OUT/demo.db" ".keyviz telemetry $OUT/telemetry.svg"
"$WCS" "$OUT/demo.db" ".keyviz tenants $OUT/tenants.svg"

for name in telemetry tenants; do
  "$CHROME" --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$PROFILE" \
    --screenshot="$OUT/$name.png" --window-size=1200,800 \
    "file://$OUT/$name.svg" >/dev/null 2>&1
  echo "rendered $OUT/$name.png"
done
