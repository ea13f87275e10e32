/* config.h — the settings of a running server, filled from the command
 * line once at start and read-only afterwards. */
#ifndef HV_SERVER_CONFIG_H
#define HV_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The longest a claim's long poll waits (seconds): a live worker calls
 *  the server at least this often. */
#define HV_CLAIM_WAIT_MAX 60

/** Room for this many --trusted networks. */
#define HV_MAX_TRUSTED 32

/** An IPv4 network: the addresses a with (a & mask) == net, both in host
 *  byte order (conns.h parses and matches them). */
struct hv_cidr {
    uint32_t net;
    uint32_t mask;
};

struct hv_server_config {
    const char *db;                  /**< libpq connection string */
    const char *listen_host;         /**< address to bind, e.g. 127.0.0.1 */
    unsigned listen_port;            /**< TCP port */
    unsigned threads;                /**< size of the thread pool */
    const char *web_dir;             /**< folder of the static front end */
    const char *migrations_dir;      /**< folder of numbered SQL files */
    size_t max_body;                 /**< largest request body accepted */
    size_t max_result_body;          /**< largest body of a job result upload */
    int worker_live_seconds;         /**< a worker seen this recently keeps its target */
    unsigned max_connections;        /**< concurrent connections */
    unsigned conn_timeout;           /**< idle connection timeout, seconds */
    unsigned header_timeout;         /**< seconds a request head may take to arrive */
    unsigned body_timeout;           /**< seconds a request body may take, from its head */
    unsigned max_per_address;        /**< connections from one untrusted address; 0: no cap */
    unsigned max_bodies_per_address; /**< request bodies one untrusted address may be sending; 0: no
                                        cap */
    unsigned trusted_reserve;        /**< of max_connections, kept for trusted addresses */
    struct hv_cidr trusted[HV_MAX_TRUSTED]; /**< networks exempt from the per-address cap */
    unsigned n_trusted;                     /**< entries of trusted in use */
    bool read_needs_token;                  /**< GET endpoints need a token too */
    /** The noise treatment of plans that do not say: "repeat" (default) or
     *  "keep" (--noise-default) */
    const char *noise_default;
    int lease_seconds;            /**< how long a claim holds a job */
    int stale_after_seconds;      /**< a target not seen this long is not online */
    double group_start_delay;     /**< seconds from a group's last ready to its start */
    int expected_schema;          /**< newest migration found at start */
    const char *hook_secret_file; /**< signing key of plans' url hooks, or NULL */
    char *hook_secret;            /**< its content (first line), or NULL */
    bool hook_private;            /**< url hooks may call private addresses */
    int plan_cache_ms;            /**< max age of a kept plan read (answer_cache.h); 0: none kept */
    unsigned batch;      /**< most claims or results in one batch (batch.h); 1: each alone */
    int batch_linger_us; /**< how long a batch waits for as many as the last one took */
    int result_lanes;    /**< threads storing results' batches (batch.h) */
};

/** The one configuration of this process. */
extern struct hv_server_config hv_cfg;

#endif
