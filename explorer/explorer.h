/*
 * The explorer's engine state, shared by engine.c (changes, undo, history)
 * and report.c (the JSON the page draws). Private to explorer/.
 */
#ifndef DCH_EXPLORER_H
#define DCH_EXPLORER_H

#include "metrics.h"
#include "scheme.h"

#include <stdbool.h>

#define EX_SCHEMES 3
/* node-01 .. node-99: two digits, as dch-analysis names up to 99 nodes. */
#define EX_MAX_NAMES 99u
#define EX_MAX_MEMBERS 48u
#define EX_MAX_WEIGHT 16u
#define EX_MAX_OPS 400u
#define EX_MAX_VIEWS 16u
#define EX_MAX_FLOWS 64u

enum ex_kind { EX_ADD, EX_REMOVE, EX_WEIGHT };

/* One change of the history; `who` is a name number. */
typedef struct ex_op {
    enum ex_kind kind;
    uint32_t who;
    uint32_t weight; /* the weight added with, or set */
    uint32_t prev;   /* EX_WEIGHT: the weight before */
} ex_op;

/* One member's exact loss to another in the last change. */
typedef struct ex_flow {
    uint32_t from, to;
    an_volume vol;
} ex_flow;

/* What the last change did to one scheme. */
typedef struct ex_change {
    bool valid;
    an_moves mv;
    double optimum;    /* least share any scheme must move */
    uint32_t parties;  /* other members that gave (join, raise) or got */
    uint32_t eligible; /* other members of positive weight */
    double worst;      /* largest flow of one other member over its ideal */
    ex_flow flows[EX_MAX_FLOWS];
    uint32_t nflows;
    an_changes ch; /* the exact plan, by name number */
} ex_change;

/* What each join moved, kept for the migration chart. */
typedef struct ex_step {
    uint32_t members; /* after the change */
    double moved[EX_SCHEMES];
    double optimum;
} ex_step;

typedef struct ex_world {
    bool ready;
    uint32_t units, slots, points, seed, views;
    an_scheme_spec spec[EX_SCHEMES];
    an_scheme sc[EX_SCHEMES];
    ex_op ops[EX_MAX_OPS];
    ex_step steps[EX_MAX_OPS];
    uint32_t nops;
    ex_change last[EX_SCHEMES];
    char message[256];
    char *json;
} ex_world;

/* The one state of the page (the page is single-threaded). */
extern ex_world ex;

/* Shared by the engine and the report. */
void ex_name_of(char *buf, size_t n, uint32_t who);
uint32_t ex_number_of(const char *name);
void ex_weights_by_number(const an_scheme *s, uint32_t *weight);
int ex_ranges_by_number(const an_scheme *s, an_ranges *out);
double ex_share_of(const an_ranges *rs, uint32_t who);



#endif /* DCH_EXPLORER_H */
