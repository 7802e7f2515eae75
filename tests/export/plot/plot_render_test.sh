#!/usr/bin/env bash
# The speedup plot as a person sees it: headless Chromium renders the SVG that
# plot_test.sh wrote, and the screenshot is not blank: it has the white background,
# the upper bound's blue and the measured points' green (png_colors.py decodes the PNG
# with zlib). Skipped (77) without chromium.
# Usage: plot_render_test.sh WORKDIR [SCREENSHOT_COPY]
set -euo pipefail
work=$1 copy=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "SKIPPED: chromium is not installed (apt-get install chromium; scripts/install-deps.sh installs it)"
  exit 77
fi
svg="$work/speedup.svg"
[[ -s "$svg" ]] || { echo "FAILED: $svg is missing (plot_test.sh writes it)"; exit 1; }
png="$work/speedup.png"
rm -f "$png"
# Its own profile directory: a shared one would be locked by another test's browser.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/chromium" \
  --window-size=720,460 --screenshot="$png" "file://$svg" > "$work/chromium.log" 2>&1 || true
[[ -s "$png" ]] || { echo "FAILED: chromium wrote no screenshot (see $work/chromium.log)"; exit 1; }
python3 "$here/png_colors.py" "$png"
[[ -z "$copy" ]] || cp "$png" "$copy"
