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
# Traffic in one process over three one-minute slots (the engine picks a
# slot's key buckets from the keys seen in the slot before, so the first
# slot is coarse): a hot writer on one tablet, then hot readers on phones.
next_minute() { sleep $((61 - $(date +%S | sed 's/^0//'))); }
echo "visual.sh: making read/write traffic over three minutes..."
{
  echo "SELECT count(*) FROM telemetry;"
  next_minute
  for i in 1 2 3 4 5 6; do
    echo "WITH RECURSIVE d(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM d WHERE n < 200)
          INSERT INTO telemetry(device, id, day, connected_cell)
          SELECT 'tablet', (SELECT id FROM telemetry WHERE device = 'tablet'
                            LIMIT 1 OFFSET 2), 20200501 + n % 31, n % 2 FROM d;"
    echo "SELECT count(*) FROM telemetry WHERE device = 'watch';"
  done
  next_minute
  for i in 1 2 3 4 5 6 7 8; do
    echo "SELECT count(*) FROM telemetry WHERE device = 'phone' AND id = '4c410523';"
    echo "SELECT count(*) FROM telemetry WHERE device = 'phone';"
  done
  echo "INSERT INTO telemetry(device, id, day, connected_cell) VALUES ('watch', (SELECT id FROM telemetry WHERE device = 'watch' LIMIT 1), 20200601, 1);"
  echo ".keyviz telemetry $OUT/telemetry.svg"
  echo ".keyviz tenants $OUT/tenants.svg"
} | "$WCS" "$OUT/demo.db"

for name in telemetry tenants; do
  "$CHROME" --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$PROFILE" \
    --screenshot="$OUT/$name.png" --window-size=1200,800 \
    "file://$OUT/$name.svg" >/dev/null 2>&1
  echo "rendered $OUT/$name.png"
done
