#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The analysis report as a reader sees it: dch-analysis writes a report on
# its default scenario, headless Chromium opens index.html from the disk, and
# the page must load with no console error, no script error and no image or
# other resource missing; every local link must name a file of the report,
# and the page must open with the four properties at a glance. Screenshots of
# the top of the page and of the whole page are kept in WORK_DIR for people
# to look at.
#
# Usage: test_report_page.sh DCH_ANALYSIS WORK_DIR
set -euo pipefail

program=${1:?dch-analysis}
work=${2:?work dir}
chromium=${DCH_CHROMIUM:-/usr/bin/chromium}

fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$chromium" ] || fail "no Chromium at $chromium (Debian package chromium; tests/deps.sh installs it)"
rm -rf "$work"
mkdir -p "$work"
report=$work/report

echo "progress: report_page: dch-analysis --out $report"
"$program" --out "$report" >"$work/analysis.log" 2>&1 ||
    { tail -n 30 "$work/analysis.log"; fail "dch-analysis failed"; }
[ -s "$report/index.html" ] || fail "no index.html"
[ -s "$report/charts.gp" ] || fail "no charts.gp"

# Every local href and src names a file of the report.
missing=0
while IFS= read -r ref; do
    case $ref in
    '#'*) continue ;;
    *://* | //*) fail "the page refers outside itself: $ref" ;;
    esac
    [ -e "$report/${ref%%#*}" ] || { echo "missing: $ref"; missing=$((missing + 1)); }
done < <(grep -oE '(href|src)="[^"]*"' "$report/index.html" | sed -E 's/^[a-z]+="(.*)"$/\1/' | sort -u)
[ "$missing" -eq 0 ] || fail "$missing local links name no file"

# A copy of the page with a watcher: the first script records every error
# event (a script error, or a resource that failed to load) and every
# console.error; after the load event, the last one writes them, with the
# images that did not decode, into a <pre id="page-check"> that --dump-dom
# prints.
watch_head='<script>
window.pageErrors = [];
window.addEventListener("error", function (e) {
    var t = e.target;
    if (t && t !== window && t.getAttribute)
        window.pageErrors.push("failed to load " + (t.getAttribute("src") || t.getAttribute("href")));
    else
        window.pageErrors.push("script error: " + e.message);
}, true);
var consoleError = console.error;
console.error = function () {
    window.pageErrors.push("console.error: " + Array.prototype.join.call(arguments, " "));
    consoleError.apply(console, arguments);
};
</script>'
watch_tail='<script>
window.addEventListener("load", function () {
    var bad = [];
    for (var i = 0; i < document.images.length; i++) {
        var im = document.images[i];
        if (!im.complete || im.naturalWidth === 0)
            bad.push(im.getAttribute("src"));
    }
    var h2 = document.getElementsByTagName("h2");
    var p = document.createElement("pre");
    p.id = "page-check";
    p.textContent = "images " + document.images.length + "\n" +
        "first-section " + (h2.length ? h2[0].id : "none") + "\n" +
        "glance-links " + document.querySelectorAll("table.glance td a").length + "\n" +
        bad.map(function (s) { return "broken-image " + s; }).join("\n") + "\n" +
        window.pageErrors.map(function (s) { return "error " + s; }).join("\n") + "\n";
    document.body.appendChild(p);
});
</script>'
# Plain text substitution: '&' in the scripts must stay '&'.
shopt -u patsub_replacement 2>/dev/null || true
page=$(<"$report/index.html")
page=${page/<head>/<head>$'\n'$watch_head}
page=${page/<\/body>/$watch_tail$'\n'</body>}
printf '%s\n' "$page" >"$report/page-check.html"

browse() {
    local profile status=0
    profile=$(mktemp -d "$work/profile.XXXXXX")
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --user-data-dir="$profile" --hide-scrollbars "$@" || status=$?
    rm -rf "$profile"
    return "$status"
}

echo "progress: report_page: Chromium: load and check"
browse --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom \
    "file://$report/page-check.html" >"$work/dom.html" 2>"$work/chromium.log" ||
    { tail -n 20 "$work/chromium.log"; fail "Chromium failed"; }
check=$(sed -n '/<pre id="page-check">/,/<\/pre>/p' "$work/dom.html" |
    sed -E 's/<[^>]*>//g')
[ -n "$check" ] || { tail -n 20 "$work/chromium.log"; fail "the page's load event never came"; }
echo "$check" | grep .
rm -f "$report/page-check.html"

images=$(sed -nE 's/^images ([0-9]+)$/\1/p' <<<"$check")
[ "${images:-0}" -ge 6 ] || fail "only ${images:-0} images on the page"
grep -q '^first-section glance$' <<<"$check" ||
    fail "the page does not open with the four properties at a glance"
links=$(sed -nE 's/^glance-links ([0-9]+)$/\1/p' <<<"$check")
[ "${links:-0}" -ge 30 ] || fail "the summary table has only ${links:-0} linked cells"
if grep -E '^(broken-image|error) ' <<<"$check"; then
    fail "the page has broken images or errors"
fi

echo "progress: report_page: Chromium: screenshots"
browse --window-size=1280,2000 --screenshot="$work/index-top.png" \
    "file://$report/index.html" 2>>"$work/chromium.log" || fail "no screenshot"
browse --window-size=1280,16000 --screenshot="$work/index-full.png" \
    "file://$report/index.html" 2>>"$work/chromium.log" || fail "no screenshot"
for png in index-top.png index-full.png; do
    [ "$(head -c 8 "$work/$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "$png is not a PNG"
done
echo "the page loads cleanly in Chromium; screenshots: $work/index-top.png, $work/index-full.png"
