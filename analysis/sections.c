/* SPDX-License-Identifier: MIT */
/*
 * The table of report sections and the runner. Which section reads what
 * another measured is data here (`needs`), not an order of calls: the
 * runner runs each section once all it needs has run, and the report shows
 * the sections in table order (the summary first, although it runs last).
 */
#include "sections.h"

#include <stdio.h>
#include <string.h>

const an_section an_sections[] = {
    {"glance", "The four properties at a glance", an_section_glance,
     {"growth", "shrink", "balance", "karger"}},
    {"schemes", "The schemes", an_section_schemes, {NULL}},
    {"growth", "1. Growth", an_section_growth, {NULL}},
    {"shrink", "2. Shrink", an_section_shrink, {"growth"}},
    {"weights", "3. Weights", an_section_weights, {"growth"}},
    {"units", "3b. Weights within each unit", an_section_units, {NULL}},
    {"balance", "4. Balance", an_section_balance, {NULL}},
    {"karger", "5. Karger's properties", an_section_karger, {"growth"}},
    {"sampled", "6. Sampled keys", an_section_sampled,
     {"growth", "shrink", "weights", "maintenance"}},
    {"replicas", "7. Replicas", an_section_replicas, {NULL}},
    {"maintenance", "8. Maintenance", an_section_maintenance, {"growth"}},
    {"load", "9. Load", an_section_load, {NULL}},
};
const size_t an_sections_count = sizeof an_sections / sizeof an_sections[0];

static size_t index_of(const char *name)
{
    for (size_t i = 0; i < an_sections_count; i++)
        if (strcmp(an_sections[i].name, name) == 0)
            return i;
    return an_sections_count;
}

/* Has every section that entry i needs run? */
static bool ready(size_t i, const bool *done)
{
    for (size_t k = 0; k < AN_MAX_NEEDS && an_sections[i].needs[k]; k++) {
        size_t j = index_of(an_sections[i].needs[k]);
        if (j == an_sections_count || !done[j])
            return false;
    }
    return true;
}

int an_sections_run(an_run *r)
{
    bool done[sizeof an_sections / sizeof an_sections[0]] = {false};
    size_t left = an_sections_count;
    while (left > 0) {
        size_t i = 0;
        while (i < an_sections_count && (done[i] || !ready(i, done)))
            i++;
        if (i == an_sections_count) /* a need that no order can meet */
            return an_fail("sections", DCH_EINVAL);
        an_report_rank(r->report, (int)i);
        int rc = an_sections[i].run(r);
        if (rc != DCH_OK)
            return rc;
        done[i] = true;
        left--;
    }
    return DCH_OK;
}

int an_section_begin(an_run *r, const char *name, const char *html)
{
    size_t i = index_of(name);
    const char *title = i < an_sections_count ? an_sections[i].title : name;
    return an_report_section(r->report, name, title, html);
}

int an_section_two_tables(an_run *r, const char *name, an_buf *html, an_table *first,
                          an_table *second)
{
    int rc = first != NULL && second != NULL ? an_section_begin(r, name, an_buf_str(html)) : -1;
    an_buf_free(html);
    if (rc != 0) {
        an_table_free(first);
        an_table_free(second);
        return an_fail(name, DCH_ENOMEM);
    }
    const int failed = an_report_table(r->report, first);
    if (an_report_table(r->report, second) != 0 || failed)
        return an_fail(name, DCH_ENOMEM);
    return DCH_OK;
}
