#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The analysis report as a reader sees it: dch-analysis writes a report on
# its default scenario, headless Chromium opens index.html from the disk at
# 1280 px wide, and the page must load with no console error, no script
# error and no image or other resource missing; every image must decode to
# a picture (not empty, not one flat colour); no table may be wider than its
# box or the page's column; every local link must name a file of the report,
# and the page must open with the four properties at a glance. Screenshots
# of the top of the page, the whole page and each section are kept in
# WORK_DIR for people to look at.
#
# Usage: test_report_page.sh DCH_ANALYSIS WORK_DIR
#    or: test_report_page.sh --report DIR WORK_DIR   (check a report already
#        written, e.g. one broken on purpose to see a check fail)
set -euo pipefail

if [ "${1:-}" = --report ]; then
    program=
    given=${2:?report dir}
    work=${3:?work dir}
else
    program=${1:?dch-analysis}
    work=${2:?work dir}
fi
chromium=${DCH_CHROMIUM:-/usr/bin/chromium}
width=1280

fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$chromium" ] || fail "no Chromium at $chromium (Debian package chromium; tests/deps.sh installs it)"
rm -rf "$work"
mkdir -p "$work"
report=$work/report

if [ -n "$program" ]; then
    echo "progress: report_page: dch-analysis --out $report"
    "$program" --out "$report" >"$work/analysis.log" 2>&1 ||
        { tail -n 30 "$work/analysis.log"; fail "dch-analysis failed"; }
else
    cp -R "$given" "$report"
fi
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
# console.error; after the load event, the last one checks the images and
# the tables and writes what it found into a <pre id="page-check"> that
# --dump-dom prints. An image is blank when, drawn on a white canvas, fewer
# than 1 pixel in 1,000 differs from its first pixel. A table overflows
# when its box scrolls sideways (scrollWidth > clientWidth + 1) or when it
# reaches past the page's column.
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
function blankImage(im) {
    var w = Math.min(im.naturalWidth, 480);
    var h = Math.max(1, Math.round(im.naturalHeight * w / im.naturalWidth));
    var c = document.createElement("canvas");
    c.width = w;
    c.height = h;
    var g = c.getContext("2d");
    g.fillStyle = "#fff";
    g.fillRect(0, 0, w, h);
    g.drawImage(im, 0, 0, w, h);
    var d = g.getImageData(0, 0, w, h).data, differ = 0;
    for (var i = 0; i < d.length; i += 4)
        if (Math.abs(d[i] - d[0]) + Math.abs(d[i + 1] - d[1]) + Math.abs(d[i + 2] - d[2]) > 24)
            differ++;
    return differ * 1000 < w * h;
}
function tableName(t) {
    var s = t.closest("section"), h = s && s.querySelector("h2");
    var head = t.querySelector("thead tr:last-child") || t.querySelector("tr");
    var cells = head ? Array.prototype.map.call(head.cells, function (c) { return c.textContent; }) : [];
    return (h ? h.id : "?") + ": " + cells.join(" | ").replace(/\s+/g, " ").slice(0, 70);
}
window.addEventListener("load", function () {
    var lines = [], bad = [];
    lines.push("images " + document.images.length);
    for (var i = 0; i < document.images.length; i++) {
        var im = document.images[i], src = im.getAttribute("src");
        if (!im.complete || im.naturalWidth === 0)
            bad.push("broken-image " + src);
        else {
            try {
                if (blankImage(im))
                    bad.push("blank-image " + src);
            } catch (e) {
                bad.push("error cannot read " + src + ": " + e.message);
            }
        }
    }
    var body = document.body.getBoundingClientRect();
    var pad = parseFloat(getComputedStyle(document.body).paddingRight) || 0;
    var right = body.right - pad;
    var tables = document.getElementsByTagName("table");
    lines.push("tables " + tables.length);
    for (var k = 0; k < tables.length; k++) {
        var t = tables[k], box = t.parentElement;
        if (box.scrollWidth > box.clientWidth + 1)
            bad.push("table-overflow " + tableName(t) + " (" + box.scrollWidth + " > " + box.clientWidth + " px)");
        else if (t.getBoundingClientRect().right > right + 1)
            bad.push("table-overflow " + tableName(t) + " (reaches " + Math.round(t.getBoundingClientRect().right) + " > " + Math.round(right) + " px)");
    }
    if (document.documentElement.scrollWidth > document.documentElement.clientWidth + 1)
        bad.push("page-overflow " + document.documentElement.scrollWidth + " > " + document.documentElement.clientWidth + " px");
    var h2 = document.getElementsByTagName("h2");
    lines.push("first-section " + (h2.length ? h2[0].id : "none"));
    lines.push("glance-links " + document.querySelectorAll("table.glance td a").length);
    var secs = document.querySelectorAll("body > section");
    for (var s = 0; s < secs.length; s++) {
        var hd = secs[s].querySelector("h2");
        lines.push("section " + (hd ? hd.id : "none") + " " + Math.ceil(secs[s].getBoundingClientRect().height));
    }
    var p = document.createElement("pre");
    p.id = "page-check";
    p.textContent = lines.join("\n") + "\n" + bad.join("\n") + "\n" +
        window.pageErrors.map(function (s) { return "error " + s; }).join("\n") + "\n";
    document.body.appendChild(p);
});
</script>'
# Plain text substitution: '&' in the scripts must stay '&'.
shopt -u patsub_replacement 2>/dev/null || true
page=$(<"$report/index.html")
check_page=${page/<head>/<head>$'\n'$watch_head}
check_page=${check_page/<\/body>/$watch_tail$'\n'</body>}
printf '%s\n' "$check_page" >"$report/page-check.html"

browse() {
    local profile status=0
    profile=$(mktemp -d "$work/profile.XXXXXX")
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --user-data-dir="$profile" "$@" || status=$?
    rm -rf "$profile"
    return "$status"
}

# Scrollbars are shown here, as a reader has them: a table box that needs
# one sideways overflows.
echo "progress: report_page: Chromium: load and check at $width px"
browse --enable-logging=stderr --v=0 --virtual-time-budget=10000 \
    --allow-file-access-from-files --window-size=$width,2000 --dump-dom \
    "file://$report/page-check.html" >"$work/dom.html" 2>"$work/chromium.log" ||
    { tail -n 20 "$work/chromium.log"; fail "Chromium failed"; }
check=$(sed -n '/<pre id="page-check">/,/<\/pre>/p' "$work/dom.html" |
    sed -E 's/<[^>]*>//g; s/&gt;/>/g; s/&lt;/</g; s/&amp;/\&/g')
[ -n "$check" ] || { tail -n 20 "$work/chromium.log"; fail "the page's load event never came"; }
echo "$check" | grep .
rm -f "$report/page-check.html"

images=$(sed -nE 's/^images ([0-9]+)$/\1/p' <<<"$check")
[ "${images:-0}" -ge 6 ] || fail "only ${images:-0} images on the page"
tables=$(sed -nE 's/^tables ([0-9]+)$/\1/p' <<<"$check")
[ "${tables:-0}" -ge 10 ] || fail "only ${tables:-0} tables on the page"
grep -q '^first-section glance$' <<<"$check" ||
    fail "the page does not open with the four properties at a glance"
links=$(sed -nE 's/^glance-links ([0-9]+)$/\1/p' <<<"$check")
[ "${links:-0}" -ge 30 ] || fail "the summary table has only ${links:-0} linked cells"
if grep -E '^(broken-image|blank-image|table-overflow|page-overflow|error) ' <<<"$check"; then
    fail "the page has broken or blank images, tables wider than the page, or errors"
fi

# Screenshots: the top, the whole page, and each section alone (a copy of
# the page that hides everything else), as tall as the section.
echo "progress: report_page: Chromium: screenshots"
shoot() { # file height url
    browse --hide-scrollbars --virtual-time-budget=5000 --window-size=$width,"$2" \
        --screenshot="$work/$1" "$3" 2>>"$work/chromium.log" || fail "no screenshot $1"
    [ "$(head -c 8 "$work/$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "$1 is not a PNG"
}
shoot index-top.png 2000 "file://$report/index.html"
shoot index-full.png 16000 "file://$report/index.html"
shots=0
while read -r _ id height; do
    only="<style>body > *:not(section), body > section:not(:has(h2#$id)) {display: none}
body > section h2 {margin-top: 0.5em}</style>"
    one=${page/<\/head>/$only$'\n'</head>}
    printf '%s\n' "$one" >"$report/section-$id.html"
    shoot "section-$id.png" $((height + 80)) "file://$report/section-$id.html"
    rm -f "$report/section-$id.html"
    shots=$((shots + 1))
done < <(grep '^section ' <<<"$check")
[ "$shots" -ge 8 ] || fail "only $shots sections to take pictures of"
echo "the page loads cleanly in Chromium; screenshots in $work: index-top.png," \
    "index-full.png and section-<id>.png for $shots sections"
