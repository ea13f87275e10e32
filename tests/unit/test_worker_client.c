/* test_worker_client.c — the address a worker announces when it serves a
 * net workload: the source address of its route to the server, or what
 * --advertise says. */
#include "tests/unit/check.h"
#include "worker/client.h"

#include <signal.h>

static volatile sig_atomic_t never;

static void test_route_address(void)
{
    char buf[256];
    struct hv_client *c = hv_client_new("http://127.0.0.1:9/", "t", 0, &never);
    CHECK(c != NULL);
    CHECK(hv_client_local_address(c, buf, sizeof buf) == 0);
    CHECK_STR(buf, "127.0.0.1"); /* loopback is reached from loopback */
    hv_client_free(c);

    c = hv_client_new("http://[::1]:9/", "t", 0, &never);
    CHECK(c != NULL);
    if (hv_client_local_address(c, buf, sizeof buf) == 0)
        CHECK_STR(buf, "::1");
    else /* a machine without IPv6 says why */
        CHECK_MSG(buf[0] != '\0', "no reason given");
    hv_client_free(c);

    c = hv_client_new("http://host.invalid:9/", "t", 0, &never);
    CHECK(c != NULL);
    CHECK(hv_client_local_address(c, buf, sizeof buf) == -1);
    CHECK_MSG(strstr(buf, "host.invalid") != NULL, "the reason names the host: %s", buf);
    hv_client_free(c);
}

static void test_advertise(void)
{
    char buf[256];
    struct hv_client *c = hv_client_new("http://host.invalid:9/", "t", 0, &never);
    CHECK(c != NULL);
    CHECK(hv_client_set_advertise(c, "bench-net.example") == 0);
    CHECK(hv_client_local_address(c, buf, sizeof buf) == 0);
    CHECK_STR(buf, "bench-net.example"); /* no lookup: the administrator knows */
    CHECK(hv_client_set_advertise(c, "192.0.2.7") == 0);
    CHECK(hv_client_local_address(c, buf, sizeof buf) == 0);
    CHECK_STR(buf, "192.0.2.7");
    hv_client_free(c);
}

int main(void)
{
    test_route_address();
    test_advertise();
    return check_summary("test_worker_client");
}
