/* config.h — the client's configuration file: the server URL and token a
 * user would otherwise pass on every command line.
 *
 *   # ~/.config/hvbench/config ($XDG_CONFIG_HOME/hvbench/config)
 *   server = https://hvbench.example.org
 *   token  = hvb_...
 *
 * One "key = value" a line; blank lines and lines starting with '#' are
 * skipped; keys are server and token. Flags win over the environment
 * (HVBENCH_SERVER, HVBENCH_TOKEN), which wins over the file. */
#ifndef HV_CLI_CONFIG_H
#define HV_CLI_CONFIG_H

#include <stddef.h>

/** What the file said; NULL for a key it did not set. Strings are owned. */
struct cli_config {
    char *server;
    char *token;
};

/** Writes the file's path into buf: $HVBENCH_CONFIG when set, else
 *  $XDG_CONFIG_HOME/hvbench/config, else $HOME/.config/hvbench/config.
 *  Returns 0, or -1 when no path can be made (no HOME) or it is too long. */
int cli_config_path(char *buf, size_t len);

/** Reads path into cfg (zeroed first). A missing file is no error (cfg
 *  stays empty) unless required; a file that holds a token but can be read
 *  by other users is refused. Returns 0, or -1 with why in err ("PATH:LINE:
 *  ..."). */
int cli_config_read(const char *path, int required, struct cli_config *cfg, char *err, size_t len);

/** Frees what cli_config_read() filled in. */
void cli_config_free(struct cli_config *cfg);

#endif
