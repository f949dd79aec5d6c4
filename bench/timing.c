/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's clocks and trials (see bench.h for the method). A timing is
 * the thread's CPU time; the wall time is kept beside it to tell how much of
 * the run other processes took, and the CPU each run starts on is noted to
 * count moves between CPUs.
 */
#include "bench.h"

#include <time.h>

/* Fewest calls a calibrated trial makes (unless --lookups is smaller). */
#define MIN_OPS 100000u
/* Turns each contender takes within a trial (see bench_run_group). */
#define SLICES 8u

double bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* CPU time of this thread: unlike wall time, it stops while other
 * processes have the core, which on a shared machine is most of the noise. */
static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Note the CPU a timed run starts on, and count moves between CPUs. */
static void note_cpu(bench *b)
{
    const int cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return;
    b->cpu_seen[cpu] = true;
    if (b->last_cpu >= 0 && cpu != b->last_cpu)
        b->migrations++;
    b->last_cpu = cpu;
}

stopwatch bench_sw_start(bench *b)
{
    note_cpu(b);
    stopwatch s;
    s.wall = bench_now_ns();
    s.cpu = cpu_ns();
    return s;
}

double bench_sw_stop(bench *b, stopwatch s)
{
    const double c = cpu_ns(), w = bench_now_ns();
    b->cpu_ns += c - s.cpu;
    b->wall_ns += w - s.wall;
    return c - s.cpu;
}

/* The loop, out of line so that it runs below time_run's padding. */
__attribute__((noinline)) static uint64_t run_loop(const contender *c,
                                                   const uint64_t *h,
                                                   uint64_t mask, uint64_t ops)
{
    return c->loop(c->obj, h, mask, ops);
}

/*
 * Nanoseconds per call of one run of `ops` calls.
 *
 * The stack is padded so that the return address each timed call pushes
 * lies 2 KiB, modulo 4 KiB, from the contender's object. A load whose
 * address matches a store still in flight in its low 12 bits is held back
 * as if it depended on it: with the floor's descriptor at the one placement
 * in 256 that matched the pushed return address, the floor measured 1.3x
 * slower, so a figure would depend on where malloc had put the object.
 */
static double time_run(bench *b, const contender *c, uint64_t mask, uint64_t ops)
{
    volatile char here = 0;
    const uintptr_t sp = (uintptr_t)&here;
    const size_t pad = (size_t)((sp - (uintptr_t)c->obj - 2048) & 4095) + 1;
    volatile char room[pad];
    room[0] = here;
    room[pad - 1] = 0;
    const stopwatch sw = bench_sw_start(b);
    b->sink += run_loop(c, b->hashes, mask, ops) + (uint64_t)room[pad - 1];
    return bench_sw_stop(b, sw) / (double)ops;
}

/*
 * Warm up and calibrate each contender (a trial makes --lookups calls, fewer
 * if that would take over --trial-ms), then run the trials. Within a trial
 * the contenders take turns in SLICES slices each, so that a change of the
 * core's clock during the trial (the host changes it, in steps of about
 * 1.2x, every few tens of milliseconds) falls on all of them alike.
 */
void bench_run_group(bench *b, contender *c, size_t nc, uint64_t mask)
{
    const double budget = (double)b->o.trial_ms * 1e6;
    const uint64_t floor_ops = b->o.lookups < MIN_OPS ? b->o.lookups : MIN_OPS;
    for (size_t i = 0; i < nc; i++) {
        const uint64_t probe = b->o.lookups < 4096 ? b->o.lookups : 4096;
        double est = time_run(b, &c[i], mask, probe);
        /* Warm up for about half a trial, then calibrate on that run. */
        double want = budget / 2 / (est > 0 ? est : 1);
        uint64_t warm = want < (double)b->o.lookups ? (uint64_t)want : b->o.lookups;
        warm = warm > probe ? warm : probe;
        est = time_run(b, &c[i], mask, warm);
        want = budget / (est > 0 ? est : 1);
        c[i].ops = want < (double)b->o.lookups ? (uint64_t)want : b->o.lookups;
        if (c[i].ops < floor_ops)
            c[i].ops = floor_ops;
    }
    for (unsigned t = 0; t < b->o.trials; t++) {
        for (size_t k = 0; k < nc; k++)
            c[k].ns[t] = 0;
        for (unsigned sl = 0; sl < SLICES; sl++)
            for (size_t k = 0; k < nc; k++) {
                contender *x = &c[(k + t + sl) % nc];
                const uint64_t part = x->ops / SLICES + (sl < x->ops % SLICES);
                if (part > 0)
                    x->ns[t] += time_run(b, x, mask, part) * (double)part;
            }
        for (size_t k = 0; k < nc; k++)
            c[k].ns[t] /= (double)c[k].ops;
    }
}
