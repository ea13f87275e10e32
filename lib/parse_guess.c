/* parse_guess.c — hv_parser_guess() (parsers.h): which tool an output
 * looks like, from signatures alone. Apart from the table in parsers.c,
 * so the parsers can name the tool in their errors (hv_pnot_mine) without
 * calling back into the table that calls them. */
#include "parsers.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Whether text has a line that starts with 14 digits and a comma (or the
 * ".000" of -e): the timestamp of iperf 2's CSV report. */
static bool iperf_csv_line(const char *text)
{
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t digits = strspn(p, "0123456789");
        if (digits == 14 && (p[14] == ',' || p[14] == '.'))
            return true;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return false;
}

/* Whether text has a line of bonnie++ 1.0x's CSV report: 27 fields, the
 * second a file size ("raid0,2G,83720,95,..."). */
static bool bonnie10_csv_line(const char *text)
{
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, "\n"), commas = 0;
        for (size_t i = 0; i < len; i++)
            commas += p[i] == ',';
        const char *size = memchr(p, ',', len);
        size_t digits = size != NULL ? strspn(size + 1, "0123456789") : 0;
        if (commas == 26 && digits > 0 && strchr("KMGT", size[1 + digits]) != NULL &&
            size[1 + digits] != '\0')
            return true;
        p = p[len] == '\n' ? p + len + 1 : NULL;
    }
    return false;
}

const char *hv_parser_guess(const char *text)
{
    if (text == NULL)
        return NULL;
    if (strstr(text, "\"fio version\"") != NULL)
        return "fio";
    if (strstr(text, "\"iperf 3") != NULL || strstr(text, "\"connecting_to\"") != NULL)
        return "iperf3";
    if (strstr(text, "stress-ng") != NULL)
        return "stress-ng";
    if (strstr(text, "Sequential Output") != NULL || strstr(text, "Sequential Create") != NULL ||
        strstr(text, "format_version,bonnie_version") != NULL ||
        (strncmp(text, "1.9", 3) == 0 && text[3] >= '0' && text[3] <= '9' && text[4] == ',') ||
        bonnie10_csv_line(text))
        return "bonnie";
    if (strncmp(text, "sysbench ", 9) == 0 || strstr(text, "\nsysbench ") != NULL)
        return "sysbench";
    if (strstr(text, "Client connecting to ") != NULL ||
        strstr(text, "Server listening on ") != NULL || iperf_csv_line(text))
        return "iperf";
    return NULL;
}
