/* curlidle.c — the memory floor of an idle libcurl client, for
 * bench/worker_idle.sh: initialise libcurl, make one GET with a keep-alive
 * handle (as a worker does before it waits), then wait for a signal. Its
 * VmRSS is what any HTTP client built on the distribution's libcurl maps
 * before it has done any work of its own.
 *
 *   build/bench/curlidle URL */
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

/* Discards the answer: only the mapping of the client matters here. */
static size_t discard(char *data, size_t size, size_t n, void *arg)
{
    (void)data;
    (void)arg;
    return size * n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: curlidle URL\n");
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    CURL *h = curl_easy_init();
    if (h == NULL)
        return 1;
    curl_easy_setopt(h, CURLOPT_URL, argv[1]);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    CURLcode rc = curl_easy_perform(h);
    if (rc != CURLE_OK)
        fprintf(stderr, "curlidle: %s\n", curl_easy_strerror(rc));
    sigset_t all;
    sigfillset(&all);
    int sig;
    sigwait(&all, &sig);
    curl_easy_cleanup(h);
    curl_global_cleanup();
    return rc == CURLE_OK ? 0 : 1;
}
