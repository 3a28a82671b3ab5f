#!/usr/bin/env bash
# The main job on the shipped demo: review the demo site plan against the demo reference
# layers, write the JSON result, the HTML report and the findings GeoPackage under build/demo/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
mkdir -p build/demo
status=0
.venv/qgis/bin/swppp review test_data/demo_site.gpkg --reference test_data/demo_reference.gpkg \
  --json build/demo/review.json --report build/demo/report.html \
  --findings build/demo/findings.gpkg \
  --sheet test_data/sheets/sheet_2260_100ft.tif --sheet test_data/sheets/sheet_utm18n_50ft_cm.tif \
  || status=$?
case $status in
  0) echo "demo: review ran; nothing failed (exit 0)" ;;
  1) echo "demo: review ran; at least one finding is 'fail' (exit 1, as README.md says)" ;;
  *) echo "demo: the review could not run (exit $status)" >&2; exit "$status" ;;
esac
echo "demo: open build/demo/report.html in a browser"
# Review rounds (docs/CLI.md, "Review rounds"): the demo as round 1 of a project's review file
# with the example decisions, its resubmittal (demo_site_round2.gpkg: BR-2's easement fixed,
# BR-1 moved out of E-1) as round 2 compared with round 1 (the findings resolved, open and new, and
# the plan changes that caused them: BR-1 moved, E-2 widened), and the comment letter for round 1.
rm -f build/demo/review_file.gpkg
for round in 1 2; do
  if [ "$round" = 1 ]; then
    plan=test_data/demo_site.gpkg; extra=(--decisions test_data/rounds/decisions.toml)
  else
    plan=test_data/demo_site_round2.gpkg; extra=(--compare-to 1)
  fi
  echo "demo: round $round: $plan"
  status=0
  .venv/qgis/bin/swppp review "$plan" --reference test_data/demo_reference.gpkg \
    --round build/demo/review_file.gpkg "${extra[@]}" --json "build/demo/round$round.json" \
    || status=$?
  if [ "$status" -ge 2 ]; then echo "demo: round $round could not run (exit $status)" >&2; exit "$status"; fi
done
.venv/qgis/bin/swppp letter build/demo/review_file.gpkg --round 1 \
  --html build/demo/letter_round1.html --reviewer "A. Reviewer, P.E."
echo "demo: the two rounds are in build/demo/review_file.gpkg; the letter for round 1 is" \
  "build/demo/letter_round1.html"
echo "demo: the design rainfall is the shipped profile's illustrative depths, not the site's" \
  "(hydrology: NEEDS REVIEW); README.md, 'First steps: the engineer', says how to set the" \
  "site's NOAA Atlas 14 values"
