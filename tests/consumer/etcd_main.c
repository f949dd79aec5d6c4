/* SPDX-License-Identifier: MIT */
/*
 * A consumer of an installed dch-etcd: includes its header, links it (and,
 * for a static install, the libcurl, json-c and threads it brings), and
 * checks what it gets back without any etcd: a malformed endpoint is
 * refused, and a fetch from a closed loopback port fails with DCH_EIO and a
 * message, within its short timeout. Exit status 0 only when all hold.
 */
#include <dch/dch.h>
#include <dch/etcd.h>

#include <stdio.h>

static int fail(const char *what, int rc)
{
    fprintf(stderr, "%s: %s\n", what, dch_strerror(rc));
    return 1;
}

int main(void)
{
    dch_etcd_config cfg;
    dch_etcd_config_default(&cfg);
    dch_etcd *c = NULL;
    cfg.endpoints = "ftp://127.0.0.1:1";
    int rc = dch_etcd_new(&c, &cfg);
    if (rc != DCH_EINVAL)
        return fail("an ftp:// endpoint was not refused", rc);
    cfg.endpoints = "http://127.0.0.1:1";
    cfg.connect_timeout_ms = 100;
    cfg.request_timeout_ms = 200;
    rc = dch_etcd_new(&c, &cfg);
    if (rc != DCH_OK)
        return fail("dch_etcd_new", rc);
    dch_map *m = NULL;
    rc = dch_etcd_fetch(c, "/dch/consumer", &m, NULL);
    const int ok = rc == DCH_EIO && dch_etcd_errmsg(c)[0] != '\0';
    printf("dch-etcd: fetch from a closed port: %s (%s)\n", dch_strerror(rc), dch_etcd_errmsg(c));
    dch_map_free(m);
    dch_etcd_free(c);
    return ok ? 0 : fail("a fetch from a closed port", rc);
}
