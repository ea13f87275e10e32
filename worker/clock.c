/* clock.c — see clock.h. */
#include "worker/clock.h"

#include <ctype.h>
#include <stdint.h>
#include <time.h>

double hv_realtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads exactly n digits at *p into *v and advances *p. */
static int digits(const char **p, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return -1;
        x = x * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *v = x;
    return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

int hv_iso8601_parse(const char *s, double *out)
{
    if (s == NULL)
        return -1;
    const char *p = s;
    int y, mo, d, h, mi, sec;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d))
        return -1;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return -1;
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
        digits(&p, 2, &sec))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60)
        return -1;
    double frac = 0;
    if (*p == '.' || *p == ',') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        double scale = 0.1;
        for (; isdigit((unsigned char)*p); p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    if (sec == 60) { /* a leap second: the last instant of the minute */
        sec = 59;
        frac = 0.999999;
    }
    int zone = 0; /* seconds east of UTC */
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, zh, zm = 0;
        if (digits(&p, 2, &zh))
            return -1;
        if (*p == ':')
            p++;
        if (isdigit((unsigned char)*p) || p[-1] == ':') {
            if (digits(&p, 2, &zm))
                return -1;
        }
        if (zh > 23 || zm > 59)
            return -1;
        zone = sign * (zh * 3600 + zm * 60);
    } else {
        return -1; /* no zone: which clock would it be? */
    }
    if (*p != '\0')
        return -1;
    int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - zone;
    *out = (double)t + frac;
    return 0;
}

void hv_clock_add(struct hv_clock *c, double t_send, double t_recv, double server_time)
{
    c->samples++;
    double rtt = t_recv - t_send;
    if (rtt < 0)
        return;
    if (c->valid && rtt >= c->rtt)
        return;
    c->valid = true;
    c->rtt = rtt;
    c->offset = server_time - (t_send + t_recv) / 2;
}

double hv_clock_server_now(const struct hv_clock *c)
{
    return hv_realtime() + (c->valid ? c->offset : 0);
}
