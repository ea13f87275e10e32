/* config.c — the defaults of the server's settings; see config.h. */
#include "config.h"

struct hv_server_config hv_cfg = {
    .listen_host = "127.0.0.1",
    .listen_port = 8080,
    .threads = 0,
    .max_body = 1u << 20,
    .max_result_body = 32u << 20,
    .worker_live_seconds = 90,
    .max_connections = 4096,
    .conn_timeout = 90,
    .header_timeout = 10,
    .body_timeout = 30,
    .max_per_address = 256,
    .max_bodies_per_address = 16,
    /* main.c sets it to an eighth of max_connections unless given. */
    .trusted_reserve = 0,
    /* 127.0.0.1/32: health checks and workers on this machine. */
    .trusted = {{.net = 0x7f000001u, .mask = 0xffffffffu}},
    .n_trusted = 1,
    .lease_seconds = 60,
    /* Three claim waits: a live worker calls at least once per wait. */
    .stale_after_seconds = 3 * HV_CLAIM_WAIT_MAX,
    .group_start_delay = 2.0,
    .plan_cache_ms = 1000,
    .batch = 64,
    .batch_linger_us = 2000,
    .result_lanes = 2,
};
