/* grow.h — room for one more element in a growing array, the one
 * doubling rule the parsers, the engines' series and the CLI's tables
 * share. */
#ifndef HV_GROW_H
#define HV_GROW_H

#include <stdlib.h>
#include <string.h>

/** Makes room for element n of the array *items (a pointer to the
 *  array's pointer) of *cap elements of size bytes: when n == *cap, the
 *  capacity doubles (to first when it was 0). Returns 0, or -1 when memory
 *  runs out (the array and *cap are then unchanged). */
static inline int hv_grow(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return 0;
    void *old;
    memcpy(&old, items, sizeof old);
    size_t bigger = *cap ? *cap * 2 : first;
    void *p = realloc(old, bigger * size);
    if (p == NULL)
        return -1;
    memcpy(items, &p, sizeof p);
    *cap = bigger;
    return 0;
}

#endif
