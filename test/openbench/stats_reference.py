#!/usr/bin/env python3
# Reference figures for stats_test.js, computed another way than
# examples/openbench/stats.js, with Python's standard library only:
#
# - Student's t quantile: the density (from math.lgamma) integrated by
#   Simpson's rule, and bisection on that distribution function (stats.js
#   uses the incomplete beta function's continued fraction);
# - Elo and its interval, OpenBench's definition: mean score, variance
#   over N, mean +- t(0.975, N - 1) * sigma / sqrt(N), logistic Elo;
# - normalised Elo: (mean - 1/2) / sigma per game * 800 / ln 10;
# - the trinomial LLR in closed form from BayesElo.
#
# Run it to print the figures stats_test.js holds:
#   python3 test/openbench/stats_reference.py
import math


def t_pdf(x, df):
    c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(c - (df + 1) / 2 * math.log1p(x * x / df))


def t_cdf(t, df, steps=20000):
    # 1/2 + the integral from 0 to t (Simpson, steps even)
    h = t / steps
    s = t_pdf(0, df) + t_pdf(t, df)
    for i in range(1, steps):
        s += (4 if i % 2 else 2) * t_pdf(i * h, df)
    return 0.5 + s * h / 3


def t_quantile(p, df):
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def logistic_elo(x):
    x = min(max(x, 1e-3), 1 - 1e-3)
    return -400 * math.log10(1 / x - 1)


def elo(counts):
    n = sum(counts)
    k = len(counts) - 1
    mu = sum(i / k * c for i, c in enumerate(counts)) / n
    var = sum((i / k - mu) ** 2 * c for i, c in enumerate(counts)) / n
    q = t_quantile(0.975, n - 1)
    half = q * math.sqrt(var) / math.sqrt(n)
    return logistic_elo(mu - half), logistic_elo(mu), logistic_elo(mu + half)


def nelo(counts):
    n = sum(counts)
    k = len(counts) - 1
    mu = sum(i / k * c for i, c in enumerate(counts)) / n
    var = sum((i / k - mu) ** 2 * c for i, c in enumerate(counts)) / n
    per_game = math.sqrt(var * (2 if len(counts) == 5 else 1))
    return (mu - 0.5) / per_game * 800 / math.log(10)


def trinomial_llr(counts, elo0, elo1):
    n = sum(counts)
    l, d, w = (c / n for c in counts)
    draw_elo = 200 * math.log10((1 - l) / l * (1 - w) / w)

    def probs(e):
        pw = 1 / (1 + 10 ** ((draw_elo - e) / 400))
        pl = 1 / (1 + 10 ** ((draw_elo + e) / 400))
        return pl, 1 - pw - pl, pw

    p0, p1 = probs(elo0), probs(elo1)
    return sum(c * math.log(b / a) for c, a, b in zip(counts, p0, p1))


if __name__ == '__main__':
    for df in (1, 2, 5, 10, 29, 100):
        print(f't(0.975, {df}) = {t_quantile(0.975, df)!r}')
    for counts in ([3, 2, 5], [120, 300, 160], [2, 10, 30, 12, 6], [39, 8843, 26675, 9240, 44]):
        print(f'elo({counts}) = {list(elo(counts))!r}')
        print(f'nelo({counts}) = {nelo(counts)!r}')
    print(f'trinomial_llr([120, 300, 160], -1, 3) = {trinomial_llr([120, 300, 160], -1, 3)!r}')
