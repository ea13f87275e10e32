#!/usr/bin/env python3
"""Reference values for test_stats, test_compare and test_efficiency.

Computed with the Python standard library only (the t distribution from
the regularized incomplete beta function by its continued fraction), so
the figures do not come from GSL, which the code under test uses.

    python3 tests/unit/ref_stats.py
"""
import math


def betacf(a, b, x):
    """Continued fraction of the incomplete beta function (Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-16:
            break
    return h


def betai(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    tail = 0.5 * betai(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_q(p, df):
    lo, hi = -1e4, 1e4
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def mean(v):
    return sum(v) / len(v)


def var(v):
    m = mean(v)
    return sum((x - m) ** 2 for x in v) / (len(v) - 1)


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def show(name, **kv):
    print(name)
    for k, v in kv.items():
        print("   %-10s %.12g" % (k, v))


def log_summary(x):
    lx = [math.log(v) for v in x]
    n = len(x)
    m, s = mean(lx), math.sqrt(var(lx))
    h = t_q(0.975, n - 1) * s / math.sqrt(n)
    show("log summary %s" % x, gmean=math.exp(m), lo=math.exp(m - h), hi=math.exp(m + h),
         sd_log=s, rel_half_pct=100 * math.expm1(h),
         cv_pct=100 * math.sqrt(var(x)) / mean(x))


def contrast(groups):
    """groups: list of (coef, values); returns est, se, df."""
    est = sum(c * mean([math.log(v) for v in x]) for c, x in groups)
    terms = [(c * c * var([math.log(v) for v in x]) / len(x), len(x)) for c, x in groups]
    se2 = sum(a for a, _ in terms)
    df = se2 ** 2 / sum(a * a / (n - 1) for a, n in terms)
    return est, math.sqrt(se2), df


def welch(a, b):
    est, se, df = contrast([(1.0, a), (-1.0, b)])
    t = t_q(0.975, df)
    p = 2 * (1 - t_cdf(abs(est) / se, df))
    show("welch %s vs %s" % (a, b), est=est, se=se, df=df, pct=100 * math.expm1(est),
         lo_pct=100 * math.expm1(est - t * se), hi_pct=100 * math.expm1(est + t * se), p=p)


def main_effect(cells):
    groups = []
    for lvl, base in cells:
        groups += [(1.0 / len(cells), lvl), (-1.0 / len(cells), base)]
    est, se, df = contrast(groups)
    t = t_q(0.975, df)
    show("main effect", est=est, se=se, df=df, pct=100 * math.expm1(est),
         lo_pct=100 * math.expm1(est - t * se), hi_pct=100 * math.expm1(est + t * se))


def outliers(x):
    med = median(x)
    mad = median([abs(v - med) for v in x])
    print("outliers %s" % x)
    print("   " + " ".join("%.10f" % (0.6745 * (v - med) / mad) for v in x))


def efficiency(items, weights):
    """items: (subsystem, guest, host, higher_is_better)."""
    subs = sorted(set(s for s, _, _, _ in items))
    total = sum(weights[s] for s in subs)
    groups = []
    for s in subs:
        mine = [it for it in items if it[0] == s]
        one = []
        for _, g, h, hib in mine:
            sign = 1.0 if hib else -1.0
            one += [(sign / len(mine), g), (-sign / len(mine), h)]
        est, se, df = contrast(one)
        t = t_q(0.975, df)
        show("efficiency of subsystem %d" % s, eff=math.exp(est), lo=math.exp(est - t * se),
             hi=math.exp(est + t * se), se=se, df=df)
        groups += [(c * weights[s] / total, x) for c, x in one]
    est, se, df = contrast(groups)
    t = t_q(0.975, df)
    show("efficiency overall", eff=math.exp(est), lo=math.exp(est - t * se),
         hi=math.exp(est + t * se), se=se, df=df)


if __name__ == "__main__":
    show("t quantiles", t1=t_q(0.975, 1), t2=t_q(0.975, 2), t9=t_q(0.975, 9))
    log_summary([96, 100, 104, 110])
    log_summary([1010, 1020, 1030])
    welch([102, 98, 105, 101, 99], [95, 97, 93, 96, 99])
    welch([10.0, 10.2, 9.9], [11.5, 12.4, 11.9, 12.0, 12.2, 11.8])
    main_effect([([105, 107, 104], [100, 101, 99]), ([210, 216, 207, 212], [200, 198, 203])])
    outliers([10.1, 9.9, 10.0, 10.2, 9.8, 14.0])
    efficiency([(0, [90, 92, 89, 91], [100, 101, 99, 100], True),
                (1, [700, 650, 720], [800, 810, 790], True),
                (1, [1.3, 1.25, 1.35], [1.0, 1.05, 0.98], False),
                (2, [9.1, 9.3, 9.0, 9.4, 9.2], [9.8, 9.9, 9.7, 9.9, 10.0], True)],
               {0: 2.0, 1: 1.0, 2: 1.0})
