/* SPDX-License-Identifier: MIT */
/*
 * The report directory and its index.html. The page is assembled from a list
 * of blocks (sections, tables, charts, images) recorded as the
 * analysis runs, so it is written once at the end, after gnuplot has said
 * which charts it could draw. It is a POSIX program (mkdir, a shell for
 * gnuplot); the library it measures is plain C11.
 */
#define _POSIX_C_SOURCE 200809L

#include "report.h"

#include "outfile.h"
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef enum block_kind {
    BLOCK_SECTION,
    BLOCK_TABLE,
    BLOCK_CHART,
    BLOCK_IMAGE
} block_kind;

typedef struct block {
    block_kind kind;
    char *a; /* section id, chart stem, image file */
    char *b; /* section title, chart or image caption */
    char *c; /* section intro, chart gnuplot body */
    an_table *table;
    int rank;      /* the page shows blocks by rank, stable */
    bool rendered; /* charts: both files exist */
} block;

struct an_report {
    char *dir;
    block *blocks;
    size_t n;
    size_t cap;
    int rank; /* of the blocks added next */
    bool all_drawn;
    char status[160];
};

static char *copy_string(const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c != NULL)
        memcpy(c, s, n);
    return c;
}

/* mkdir -p: every missing component of `path` is created. */
static int make_dirs(const char *path)
{
    char *p = copy_string(path);
    if (p == NULL)
        return -1;
    int rc = 0;
    for (char *s = p + 1;; s++) {
        char c = *s;
        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rc = -1;
            break;
        }
        *s = c;
        if (c == '\0')
            break;
    }
    struct stat st;
    if (rc == 0 && (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)))
        rc = -1;
    free(p);
    return rc;
}

an_report *an_report_new(const char *dir)
{
    if (make_dirs(dir) != 0) {
        fprintf(stderr, "dch-analysis: cannot create directory %s: %s\n", dir,
                strerror(errno));
        return NULL;
    }
    an_report *rp = calloc(1, sizeof *rp);
    if (rp == NULL || (rp->dir = copy_string(dir)) == NULL) {
        free(rp);
        fprintf(stderr, "dch-analysis: out of memory\n");
        return NULL;
    }
    snprintf(rp->status, sizeof rp->status, "not rendered");
    return rp;
}

void an_report_free(an_report *rp)
{
    if (rp == NULL)
        return;
    for (size_t i = 0; i < rp->n; i++) {
        free(rp->blocks[i].a);
        free(rp->blocks[i].b);
        free(rp->blocks[i].c);
        an_table_free(rp->blocks[i].table);
    }
    free(rp->blocks);
    free(rp->dir);
    free(rp);
}

const char *an_report_dir(const an_report *rp)
{
    return rp->dir;
}

void an_report_path(const an_report *rp, const char *file, char *buf,
                    size_t n)
{
    snprintf(buf, n, "%s/%s", rp->dir, file);
}

/* Append a block; the strings are copied, the table is taken. */
static int push(an_report *rp, block_kind kind, const char *a, const char *b,
                const char *c, an_table *t)
{
    if (rp->n == rp->cap) {
        size_t cap = rp->cap ? 2 * rp->cap : 32;
        block *v = realloc(rp->blocks, cap * sizeof *v);
        if (v == NULL) {
            an_table_free(t);
            return -1;
        }
        rp->blocks = v;
        rp->cap = cap;
    }
    block bl = {kind, copy_string(a), copy_string(b), copy_string(c), t,
                rp->rank, false};
    if ((a && !bl.a) || (b && !bl.b) || (c && !bl.c)) {
        free(bl.a);
        free(bl.b);
        free(bl.c);
        an_table_free(t);
        return -1;
    }
    rp->blocks[rp->n++] = bl;
    return 0;
}

int an_report_section(an_report *rp, const char *id, const char *title,
                      const char *html)
{
    return push(rp, BLOCK_SECTION, id, title, html, NULL);
}

void an_report_rank(an_report *rp, int rank)
{
    rp->rank = rank;
}

int an_report_table(an_report *rp, an_table *t)
{
    if (t == NULL)
        return -1;
    an_table_print(t, stdout);
    fflush(stdout);
    char path[4096], file[512];
    snprintf(file, sizeof file, "%s.csv", an_table_id(t));
    an_report_path(rp, file, path, sizeof path);
    if (an_table_write_csv(t, path) != 0) {
        fprintf(stderr, "dch-analysis: cannot write %s\n", path);
        an_table_free(t);
        return -1;
    }
    return push(rp, BLOCK_TABLE, NULL, NULL, NULL, t);
}

/* s as a gnuplot single-quoted string, where '' stands for a quote (a
 * title such as "its keys' primaries" would end the string otherwise). */
static void gp_string(an_buf *b, const char *s)
{
    an_buf_printf(b, "'");
    for (; *s; s++)
        an_buf_printf(b, *s == '\'' ? "''" : "%c", *s);
    an_buf_printf(b, "'");
}

/* One series as gnuplot text: a function of x, or columns of a CSV. */
static void series_text(an_buf *b, const an_series *sr)
{
    if (sr->file == NULL)
        an_buf_printf(b, "%s", sr->x);
    else if (sr->only != NULL)
        an_buf_printf(b, "'%s' skip 1 using %s:(strcol(1) eq '%s' ? %s : 1/0)",
                      sr->file, sr->x, sr->only, sr->y);
    else if (sr->y != NULL)
        an_buf_printf(b, "'%s' skip 1 using %s:%s", sr->file, sr->x, sr->y);
    else
        an_buf_printf(b, "'%s' skip 1 using %s", sr->file, sr->x);
    if (sr->style != NULL)
        an_buf_printf(b, " with %s", sr->style);
    an_buf_printf(b, " lc rgb '%s' title ", sr->colour);
    gp_string(b, sr->title);
}

int an_report_chart(an_report *rp, const an_chart *c)
{
    an_buf b = {0};
    if (c->xlabel != NULL) {
        an_buf_printf(&b, "set xlabel ");
        gp_string(&b, c->xlabel);
        an_buf_printf(&b, "\n");
    }
    if (c->ylabel != NULL) {
        an_buf_printf(&b, "set ylabel ");
        gp_string(&b, c->ylabel);
        an_buf_printf(&b, "\n");
    }
    if (c->settings != NULL)
        an_buf_printf(&b, "%s", c->settings);
    for (size_t i = 0; i < c->nseries; i++) {
        an_buf_printf(&b, "%s", i == 0 ? "plot " : ", \\\n     ");
        series_text(&b, &c->series[i]);
    }
    an_buf_printf(&b, "\n");
    int rc = b.failed ? -1
                      : push(rp, BLOCK_CHART, c->stem, c->caption, b.s, NULL);
    an_buf_free(&b);
    return rc;
}

int an_report_image(an_report *rp, const char *file, const char *caption)
{
    return push(rp, BLOCK_IMAGE, file, caption, NULL, NULL);
}

const char *an_report_chart_status(const an_report *rp)
{
    return rp->status;
}

/* ---- Charts ------------------------------------------------------------------ */

/* Quote s for the shell inside single quotes ('\'' for each quote). */
static void shell_quote(char *out, size_t n, const char *s)
{
    size_t k = 0;
    if (k + 1 < n)
        out[k++] = '\'';
    for (; *s && k + 5 < n; s++) {
        if (*s == '\'') {
            memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            out[k++] = *s;
        }
    }
    if (k + 1 < n)
        out[k++] = '\'';
    out[k < n ? k : n - 1] = '\0';
}

static bool file_nonempty(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

static void remove_if_present(const an_report *rp, const char *stem,
                              const char *ext)
{
    char file[512], path[4096];
    snprintf(file, sizeof file, "%s%s%s", stem, ext[0] ? "." : "", ext);
    an_report_path(rp, file, path, sizeof path);
    remove(path);
}

/*
 * What every chart starts from, before its own settings (which may override
 * it): the x axis ends where the data ends (a bar chart's categories keep
 * gnuplot's margins); an autoscaled y axis ends 6% of its height above the
 * highest point (not at the next tic, which can be the point itself or a
 * whole decade away on a log axis), so no point or line touches the top
 * of the frame, and as much below the lowest unless the chart sets the
 * bottom of its y range (gnuplot would move a set bottom too). A log y
 * axis keeps gnuplot's own autoscale instead, to the decades around the
 * data (offsets are linear, so they would not make room on a log axis).
 * Every key is laid out alike, above the plot where it can hide no data, a
 * sample then its title, in evenly spaced columns.
 */
static const char *const CHART_DEFAULTS =
    "set key outside top center horizontal Left reverse samplen 2.5 spacing 1.25 "
    "width 1\n";

/* Does the chart set the bottom of its y range ("set yrange [0:*]")? */
static bool bottom_set(const char *body)
{
    const char *y = strstr(body, "set yrange [");
    return y != NULL && y[12] != '*';
}

/* The y axis defaults of a chart whose settings are `body`. */
static const char *y_defaults(const char *body)
{
    if (strstr(body, "set logscale y") != NULL || strstr(body, "set logscale xy") != NULL)
        return "";
    return bottom_set(body) ? "set autoscale yfix\nset offsets 0, 0, graph 0.06, 0\n"
                            : "set autoscale yfix\nset offsets 0, 0, graph 0.06, graph 0.06\n";
}

/*
 * Write charts.gp, the script that draws every chart from the CSVs. It is
 * written whether or not gnuplot runs here, so the charts can be drawn later
 * or elsewhere. Each chart is drawn to hidden temporary files that are
 * renamed over stem.png and stem.svg once both are complete, so a stopped
 * run leaves whole charts or none (as outfile.h does for the other files).
 * @return the number of charts, or -1 if it cannot be written.
 */
static long write_chart_script(an_report *rp)
{
    size_t charts = 0;
    for (size_t i = 0; i < rp->n; i++)
        charts += rp->blocks[i].kind == BLOCK_CHART;
    if (charts == 0)
        return 0;
    char path[4096];
    an_report_path(rp, "charts.gp", path, sizeof path);
    an_outfile out;
    if (an_outfile_open(&out, path) != 0)
        return -1;
    FILE *f = out.f;
    fputs("# The report's charts, drawn from its CSV files.\n"
          "# Re-render them from this directory with: gnuplot charts.gp\n"
          "set encoding utf8\n",
          f);
    for (size_t i = 0; i < rp->n; i++) {
        const block *b = &rp->blocks[i];
        if (b->kind != BLOCK_CHART)
            continue;
        remove_if_present(rp, b->a, "png");
        remove_if_present(rp, b->a, "svg");
        const bool bars = strstr(b->c, "histograms") != NULL;
        fprintf(f,
                "\n# %s\nreset\nset datafile separator ','\nset grid\n%s%s%s"
                "set terminal pngcairo size 960,540 enhanced font 'sans,10'\n"
                "set output '.%s.png.part'\n%s\n"
                "set terminal svg size 960,540 dynamic enhanced "
                "font 'sans,11' background rgb 'white'\n"
                "set output '.%s.svg.part'\nreplot\nunset output\n"
                "system \"mv -f .%s.png.part %s.png && mv -f .%s.svg.part %s.svg\"\n",
                b->a, CHART_DEFAULTS, y_defaults(b->c),
                bars ? "" : "set autoscale xfix\n", b->a,
                b->c, b->a, b->a, b->a, b->a, b->a);
    }
    if (an_outfile_commit(&out) != 0)
        return -1;
    return (long)charts;
}

/* Run gnuplot on charts.gp and see which charts it drew. */
static void render_charts(an_report *rp, size_t charts)
{
    char dir[4200], cmd[8600];
    shell_quote(dir, sizeof dir, rp->dir);
    snprintf(cmd, sizeof cmd,
             "cd %s && gnuplot charts.gp >.charts.log.part 2>&1; "
             "s=$?; mv -f .charts.log.part charts.log; exit $s", dir);
    int rc = system(cmd);
    size_t ok = 0;
    for (size_t i = 0; i < rp->n; i++) {
        block *b = &rp->blocks[i];
        if (b->kind != BLOCK_CHART)
            continue;
        char file[512], png[4096], svg[4096];
        snprintf(file, sizeof file, "%s.png", b->a);
        an_report_path(rp, file, png, sizeof png);
        snprintf(file, sizeof file, "%s.svg", b->a);
        an_report_path(rp, file, svg, sizeof svg);
        b->rendered = file_nonempty(png) && file_nonempty(svg);
        ok += b->rendered;
        /* A chart gnuplot stopped on leaves its temporary files. */
        char part[512];
        snprintf(part, sizeof part, ".%s.png.part", b->a);
        remove_if_present(rp, part, "");
        snprintf(part, sizeof part, ".%s.svg.part", b->a);
        remove_if_present(rp, part, "");
    }
    rp->all_drawn = rc == 0 && ok == charts;
    if (rp->all_drawn) {
        snprintf(rp->status, sizeof rp->status, "%zu rendered", charts);
        char log[4096];
        an_report_path(rp, "charts.log", log, sizeof log);
        struct stat st;
        if (stat(log, &st) == 0 && st.st_size == 0)
            remove(log);
    }
    else
        snprintf(rp->status, sizeof rp->status,
                 "partly failed: %zu of %zu drawn, see charts.log", ok, charts);
}

static bool have_gnuplot(void)
{
    return system(NULL) != 0 &&
           system("gnuplot --version >/dev/null 2>&1") == 0;
}

/* ---- HTML -------------------------------------------------------------------- */

/* Tables: headers wrap at their spaces, numbers do not; a table too wide
 * for the column is cut into panels by table.c, and the page test holds
 * every table to its container. */
static const char *const STYLE =
    "body{font-family:sans-serif;max-width:1100px;margin:1em auto;"
    "padding:0 1em;color:#222;line-height:1.45}\n"
    "h1{font-size:1.6em}h2{margin-top:2.2em;border-bottom:1px solid #ccc}\n"
    "p.lead{font-size:1.05em}\n"
    "table{border-collapse:collapse;font-size:0.82em;margin:0.4em 0}\n"
    "caption{text-align:left;font-weight:bold;padding:0.3em 0}\n"
    "th,td{padding:2px 7px;border-bottom:1px solid #e4e4e4}\n"
    "th{background:#f0f0f0;text-align:center;font-weight:600}"
    "th.group{border-bottom:1px solid #bbb}\n"
    "td{white-space:nowrap}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}\n"
    "tr.group td{border-top:2px solid #999}\n"
    ".scroll{max-height:30em;overflow:auto;border:1px solid #ddd;"
    "display:inline-block;max-width:100%;vertical-align:top;margin:0.4em 0}\n"
    ".scroll table{margin:0}\n"
    "figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}\n"
    "figcaption{font-size:0.9em;color:#444}\n"
    ".skipped{color:#a33}.csv,.note{font-size:0.85em;color:#444}"
    ".csv{margin-top:0.2em}\n"
    "code{background:#f4f4f4;padding:0 3px}\n"
    "nav ul{columns:2;list-style:none;padding-left:1em}\n"
    "table.glance td,table.glance th{vertical-align:top}"
    "table.glance td.why{font-size:0.95em;color:#444;min-width:11em;"
    "white-space:normal}\n"
    "table.glance td a{color:inherit}\n";

/* Blocks in page order: by rank, in the order added within a rank. */
static void order_blocks(an_report *rp)
{
    for (size_t i = 1; i < rp->n; i++) {
        block b = rp->blocks[i];
        size_t j = i;
        for (; j > 0 && rp->blocks[j - 1].rank > b.rank; j--)
            rp->blocks[j] = rp->blocks[j - 1];
        rp->blocks[j] = b;
    }
}

/* Write charts.gp and, when asked and possible, draw the charts; the
 * outcome goes to rp->status (and stderr unless all were drawn). */
static void charts_step(an_report *rp, bool charts)
{
    const long script = write_chart_script(rp);
    if (script < 0)
        snprintf(rp->status, sizeof rp->status, "skipped: cannot write charts.gp");
    else if (script == 0)
        snprintf(rp->status, sizeof rp->status, "none");
    else if (!charts)
        snprintf(rp->status, sizeof rp->status,
                 "skipped: --no-charts; charts.gp is written, run gnuplot charts.gp "
                 "in this directory to draw them");
    else if (!have_gnuplot())
        snprintf(rp->status, sizeof rp->status,
                 "skipped: gnuplot not found; install gnuplot-nox, then run gnuplot "
                 "charts.gp in this directory");
    else
        render_charts(rp, (size_t)script);
    if (!rp->all_drawn && script != 0)
        fprintf(stderr, "dch-analysis: charts %s\n", rp->status);
}

/* The page's head, title, preamble and contents. */
static void write_head(FILE *f, const an_report *rp, const char *title,
                       const char *preamble)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>",
          f);
    an_html_fputs(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", STYLE);
    an_html_fputs(f, title);
    fprintf(f, "</h1>\n%s\n", preamble);

    /* The section titles carry their own numbers, so the list does not. */
    fputs("<nav><h3>Contents</h3><ul>\n", f);
    for (size_t i = 0; i < rp->n; i++) {
        const block *b = &rp->blocks[i];
        if (b->kind != BLOCK_SECTION)
            continue;
        fprintf(f, "<li><a href=\"#%s\">", b->a);
        an_html_fputs(f, b->b);
        fputs("</a></li>\n", f);
    }
    fputs("</ul></nav>\n", f);
    if (!rp->all_drawn && strcmp(rp->status, "none") != 0)
        fprintf(f, "<p class=\"skipped\">Charts %s.</p>\n", rp->status);
}

static void write_chart(FILE *f, const block *b)
{
    if (b->rendered) {
        fprintf(f, "<figure><a href=\"%s.svg\"><img src=\"%s.png\" alt=\"",
                b->a, b->a);
        an_html_fputs(f, b->b);
        fputs("\"></a><figcaption>", f);
        an_html_fputs(f, b->b);
        fprintf(f, " (<a href=\"%s.png\">PNG</a>, <a href=\"%s.svg\">SVG</a>)"
                "</figcaption></figure>\n", b->a, b->a);
    } else {
        /* Why is said once, at the top of the page. */
        fputs("<p class=\"skipped\">Chart not drawn: ", f);
        an_html_fputs(f, b->b);
        fputs("</p>\n", f);
    }
}

static void write_block(FILE *f, const an_report *rp, const block *b)
{
    switch (b->kind) {
    case BLOCK_SECTION:
        /* A section holds its blocks up to the next section. */
        fprintf(f, "%s\n<section>\n<h2 id=\"%s\">", b == rp->blocks ? "" : "</section>",
                b->a);
        an_html_fputs(f, b->b);
        fprintf(f, "</h2>\n%s\n", b->c ? b->c : "");
        break;
    case BLOCK_TABLE:
        fputs("<h4>", f);
        an_html_fputs(f, an_table_title(b->table));
        fputs("</h4>\n", f);
        an_table_write_html(b->table, f);
        fprintf(f, "<p class=\"csv\">Data: <a href=\"%s.csv\">%s.csv</a></p>\n",
                an_table_id(b->table), an_table_id(b->table));
        break;
    case BLOCK_CHART:
        write_chart(f, b);
        break;
    case BLOCK_IMAGE:
        /* The image draws its own title; the description is its alt text. */
        fprintf(f, "<figure><a href=\"%s\"><img src=\"%s\" alt=\"", b->a, b->a);
        an_html_fputs(f, b->b);
        fputs("\"></a></figure>\n", f);
        break;
    }
}

int an_report_finish(an_report *rp, bool charts, const char *title,
                     const char *preamble)
{
    order_blocks(rp);
    charts_step(rp, charts);
    char path[4096];
    an_report_path(rp, "index.html", path, sizeof path);
    an_outfile out;
    if (an_outfile_open(&out, path) != 0) {
        fprintf(stderr, "dch-analysis: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    FILE *f = out.f;
    write_head(f, rp, title, preamble);
    for (size_t i = 0; i < rp->n; i++)
        write_block(f, rp, &rp->blocks[i]);
    fputs(rp->n > 0 && rp->blocks[0].kind == BLOCK_SECTION ? "</section>\n" : "", f);
    fputs("</body>\n</html>\n", f);
    if (an_outfile_commit(&out) != 0) {
        fprintf(stderr, "dch-analysis: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}
