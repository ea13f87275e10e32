/* parse_guess.c — hv_parser_guess() (parsers.h): which tool an output
 * looks like, from the signatures of the tools' descriptions alone. Apart
 * from the table in parsers.c, so the parsers can name the tool in their
 * errors (hv_pnot_mine) without calling back into the table that calls
 * them. */
#include "parse_util.h"

#include <stddef.h>

/* The descriptions by their line's guess in tools.def, 1 first: a loose
 * signature is asked after the sharp ones it could mistake. */
static const struct hv_tool_parser *const by_guess[] = {
#define HV_TOOL(id, kind, guess) [(guess)-1] = &hv_tool_parser_##id,
#include "tools.def"
#undef HV_TOOL
};

const char *hv_parser_guess(const char *text)
{
    if (text == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof by_guess / sizeof by_guess[0]; i++)
        if (by_guess[i] != NULL && by_guess[i]->guess(text))
            return by_guess[i]->name;
    return NULL;
}
