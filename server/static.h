/* static.h — the web front end, served from a fixed table.
 *
 * The table names every file the server may send; the files are read into
 * memory once at start. A URL is only ever compared with the table, never
 * joined onto a folder, so no request can reach another file. */
#ifndef HV_SERVER_STATIC_H
#define HV_SERVER_STATIC_H

#include <stddef.h>

struct hv_static_file {
    const char *url;          /**< e.g. "/app.js" */
    const char *file;         /**< name inside the web folder */
    const char *content_type; /**< static string */
    char *data;               /**< the file's bytes, loaded at start */
    size_t len;
};

/** Loads every file of the table from dir. Missing files are logged and
 *  answered 404 later. Returns the number of files loaded. */
int hv_static_load(const char *dir);

/** The file served at url, or NULL. */
const struct hv_static_file *hv_static_find(const char *url);

#endif
