/* static.c — see static.h. */
#include "static.h"

#include "fileio.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTML "text/html; charset=utf-8"
#define JS   "text/javascript; charset=utf-8"
#define CSS  "text/css; charset=utf-8"
#define TEXT "text/plain; charset=utf-8"

/* Every file the page may load, by URL. Adding a file to web/ means adding
 * its row here (and to the install rule in the Makefile). */
static struct hv_static_file files[] = {
    {"/", "index.html", HTML, NULL, 0},
    {"/index.html", "index.html", HTML, NULL, 0},
    {"/style.css", "style.css", CSS, NULL, 0},
    {"/js/main.js", "js/main.js", JS, NULL, 0},
    {"/js/dom.js", "js/dom.js", JS, NULL, 0},
    {"/js/api.js", "js/api.js", JS, NULL, 0},
    {"/js/route.js", "js/route.js", JS, NULL, 0},
    {"/js/fmt.js", "js/fmt.js", JS, NULL, 0},
    {"/js/ui.js", "js/ui.js", JS, NULL, 0},
    {"/js/table.js", "js/table.js", JS, NULL, 0},
    {"/js/charts.js", "js/charts.js", JS, NULL, 0},
    {"/js/page-plans.js", "js/page-plans.js", JS, NULL, 0},
    {"/js/page-plan.js", "js/page-plan.js", JS, NULL, 0},
    {"/js/plan-report.js", "js/plan-report.js", JS, NULL, 0},
    {"/js/page-jobs.js", "js/page-jobs.js", JS, NULL, 0},
    {"/js/page-job.js", "js/page-job.js", JS, NULL, 0},
    {"/js/page-targets.js", "js/page-targets.js", JS, NULL, 0},
    {"/js/page-target.js", "js/page-target.js", JS, NULL, 0},
    {"/js/target-history.js", "js/target-history.js", JS, NULL, 0},
    {"/js/page-compare.js", "js/page-compare.js", JS, NULL, 0},
    {"/js/plan-hosts.js", "js/plan-hosts.js", JS, NULL, 0},
    {"/js/page-fleet-history.js", "js/page-fleet-history.js", JS, NULL, 0},
    {"/js/page-recommendations.js", "js/page-recommendations.js", JS, NULL, 0},
    {"/vendor/uPlot.iife.min.js", "vendor/uPlot.iife.min.js", JS, NULL, 0},
    {"/vendor/uPlot.min.css", "vendor/uPlot.min.css", CSS, NULL, 0},
    {"/vendor/uPlot.LICENSE.txt", "vendor/uPlot.LICENSE.txt", TEXT, NULL, 0},
    {"/vendor/VERSIONS.txt", "vendor/VERSIONS.txt", TEXT, NULL, 0},
};

#define N_FILES         (sizeof files / sizeof files[0])
#define MAX_STATIC_FILE (8u << 20)

int hv_static_load(const char *dir)
{
    int loaded = 0;
    for (size_t i = 0; i < N_FILES; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[i].file);
        free(files[i].data);
        files[i].data = hv_read_file(path, MAX_STATIC_FILE, 0, &files[i].len);
        if (files[i].data == NULL)
            hv_warn("web: cannot read %s; %s will answer 404", path, files[i].url);
        else
            loaded++;
    }
    return loaded;
}

const struct hv_static_file *hv_static_find(const char *url)
{
    for (size_t i = 0; i < N_FILES; i++)
        if (strcmp(files[i].url, url) == 0)
            return files[i].data != NULL ? &files[i] : NULL;
    return NULL;
}
