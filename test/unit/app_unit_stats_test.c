/*
 * app_unit_stats_test.c: unit tests of src/app_unit_stats.c (an app's
 * app-unit statistics from its validated reports, one voice per host) and
 * of the voice-weighted percentile in src/percentile.c, without
 * PostgreSQL.  Prints TAP.  Build and run: make -C test/unit.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "app_unit_stats.h"
#include "percentile.h"
#include "tap.h"

#define MAXR 4096

static AppUnitReport reports[MAXR];
static double work[4 * MAXR];

static bool
near(double got, double want, double rel)
{
	return got == want || fabs(got - want) <= rel * (fabs(want) > 1 ? fabs(want) : 1);
}

static double
stdev(const AppStats *s)
{
	return allot_stdev(s->n, s->au_ratio_m2);
}

static int
add(int n, int64_t host, double actual, double predicted)
{
	reports[n].voice = host;
	reports[n].actual = actual;
	reports[n].predicted = predicted;
	return n + 1;
}

/* The seed's statistics when one host reports everything: Welford's. */
static bool
t_one_host_is_plain(void)
{
	AppStats	s;
	double		cap;
	int			n = 0;

	n = add(n, 1, 1, 1);
	n = add(n, 1, 1, 1);
	n = add(n, 1, 2, 1);
	n = add(n, 1, 2, 1);
	allot_app_unit_stats(reports, n, work, &s, &cap);
	return s.n == 4 && near(s.au_ratio_mean, 1.5, 1e-12) &&
		near(s.au_ratio_m2, 1, 1e-12) &&	/* sample variance 1/3 */
		near(s.actual_au_mean, 1.5, 1e-12) && near(s.predicted_au_mean, 1, 1e-12) &&
		cap >= 2;
}

/*
 * An honest heavy tail is learnt in full: one job in ten takes ten times
 * its prediction, ten hosts of ten reports.  Mean 1.9, population variance
 * 7.29, so the seed's factors 1.9 + 2 sd and 1.9 + 4 sd (sd = 2.7136 with
 * Bessel's correction over 100 reports) and the bound reaches past 10.
 */
static bool
t_heavy_tail_in_full(void)
{
	AppStats	s;
	double		cap;
	int			n = 0;

	for (int h = 0; h < 10; h++)
		for (int k = 0; k < 10; k++)
			n = add(n, h, k == h ? 10 : 1, 1);
	allot_app_unit_stats(reports, n, work, &s, &cap);
	return near(s.au_ratio_mean, 1.9, 1e-12) &&
		near(stdev(&s), sqrt(7.29 * 100 / 99), 1e-12) &&
		near(allot_app_unit_factor(&s, ALLOT_ESTIMATE_X), 1.9 + 2 * sqrt(7.29 * 100 / 99), 1e-12) &&
		cap >= 10;
}

/* One voice per host: 99 reports of one host weigh what one report does. */
static bool
t_one_voice(void)
{
	AppStats	s;
	double		cap;
	int			n = 0;

	for (int k = 0; k < 99; k++)
		n = add(n, 7, 1, 1);
	n = add(n, 8, 1.5, 1);
	allot_app_unit_stats(reports, n, work, &s, &cap);
	return near(s.au_ratio_mean, 1.25, 1e-12) && near(s.actual_au_mean, 1.25, 1e-12);
}

/*
 * A claim of 1e12 app units counts as a report at the bound: the statistics
 * are those of the same reports with the claim replaced by the bound, and
 * the bound stays that of an honest farm, not of the claim.
 */
static bool
t_absurd_claim_at_the_bound(void)
{
	AppStats	lied,
				at_bound;
	double		cap,
				cap2;
	int			n = 0;

	for (int h = 0; h < 50; h++)
		for (int k = 0; k < 10; k++)
			n = add(n, h, k == h % 10 ? 10 : 1, 1);
	n = add(n, 1000, 1e12, 1);
	allot_app_unit_stats(reports, n, work, &lied, &cap);
	for (int i = 0; i < n; i++)
		if (reports[i].voice == 1000)
			reports[i].actual = cap;
	allot_app_unit_stats(reports, n, work, &at_bound, &cap2);
	return cap < 20 && near(cap2, cap, 1e-9) &&
		near(lied.au_ratio_mean, at_bound.au_ratio_mean, 1e-9) &&
		near(lied.au_ratio_m2, at_bound.au_ratio_m2, 1e-9);
}

/*
 * Plausibility: a host whose twenty reports all claim ten times the
 * prediction is pulled back to what chance allows twenty honest reports;
 * the same twenty long jobs spread over twenty hosts count in full.
 */
static bool
t_host_plausibility(void)
{
	AppStats	one_host,
				spread;
	double		cap;
	int			n = 0;

	for (int h = 0; h < 40; h++)
		for (int k = 0; k < 20; k++)
			n = add(n, h, 1, 1);
	for (int k = 0; k < 20; k++)
		n = add(n, 100, 10, 1);
	allot_app_unit_stats(reports, n, work, &one_host, &cap);
	n = 0;
	for (int h = 0; h < 40; h++)
		for (int k = 0; k < 20; k++)
			n = add(n, h, 1, 1);
	for (int k = 0; k < 20; k++)
		n = add(n, 100 + k, 10, 1);
	allot_app_unit_stats(reports, n, work, &spread, &cap);
	/* 41 voices, one at 10: 1 + 9/41 = 1.2195 if counted in full */
	return one_host.au_ratio_mean < 1.2 &&
		spread.au_ratio_mean > one_host.au_ratio_mean;
}

/* Predicted app units are averaged by voice too; ratios use each job's own. */
static bool
t_predicted_means(void)
{
	AppStats	s;
	double		cap;
	int			n = 0;

	n = add(n, 1, 4, 2);
	n = add(n, 1, 4, 2);
	n = add(n, 2, 8, 4);
	allot_app_unit_stats(reports, n, work, &s, &cap);
	return near(s.predicted_au_mean, 3, 1e-12) && near(s.actual_au_mean, 6, 1e-12) &&
		near(s.au_ratio_mean, 2, 1e-12) && near(s.au_ratio_m2, 0, 1e-12);
}

static bool
t_empty(void)
{
	AppStats	s;
	double		cap;

	allot_app_unit_stats(reports, 0, work, &s, &cap);
	return s.n == 0 && cap == 0 && allot_app_unit_factor(&s, ALLOT_BOUND_X) == 1;
}

/* Equal weights: percentile_disc, but for p * n whole. */
static bool
t_voices_equal_weights(void)
{
	double		v[100],
				w[100],
				u[100];
	bool		ok = true;

	for (int n = 1; n <= 100 && ok; n++)
	{
		for (int i = 0; i < n; i++)
		{
			v[i] = u[i] = (double) ((i * 37) % n);
			w[i] = 1;
		}
		{
			double		p = 0.05;
			double		got = allot_percentile_voices(v, w, n, p);
			double		want = allot_percentile_disc(u, n, p);
			long		k = (long) (p * n + 1e-9);

			/* (i * 37) % n over i < n are 0 .. n-1 when gcd(37, n) = 1 */
			if (n % 37 != 0)
				ok = (fabs(p * n - k) < 1e-9) ? got == (double) k : got == want;
		}
	}
	return ok;
}

/* Five liars of a hundred hosts cannot set the 5th percentile; six can. */
static bool
t_voices_liars(void)
{
	double		v[200],
				w[200];
	int			n = 0;

	for (int h = 0; h < 95; h++)
	{
		v[n] = 1e12 + h * 1e9;
		w[n++] = 1;
	}
	/* five lying hosts, each with twenty reports of 1e3 */
	for (int h = 0; h < 5; h++)
		for (int k = 0; k < 20; k++)
		{
			v[n] = 1e3;
			w[n++] = 1.0 / 20;
		}
	if (allot_percentile_voices(v, w, n, 0.05) != 1e12)
		return false;
	/* a sixth liar (the selection reordered the arrays: find a host) */
	for (int i = 0; i < n; i++)
		if (w[i] == 1 && v[i] > 1e3)
		{
			v[i] = 1e3;
			break;
		}
	return allot_percentile_voices(v, w, n, 0.05) == 1e3;
}

static const UnitTest tests[] =
{
	{"one host: Welford's statistics, the seed's worked example", t_one_host_is_plain},
	{"honest heavy tail (1 job in 10 at 10x) learnt in full", t_heavy_tail_in_full},
	{"one voice per host however many reports", t_one_voice},
	{"a claim of 1e12 app units counts at the bound", t_absurd_claim_at_the_bound},
	{"a host always long is pulled back; twenty hosts once long are not", t_host_plausibility},
	{"predicted and actual means by voice", t_predicted_means},
	{"no reports: no statistics", t_empty},
	{"percentile by voices: equal weights as percentile_disc, one past whole p*n", t_voices_equal_weights},
	{"percentile by voices: 5 lying hosts of 100 do not set it, 6 do", t_voices_liars},
};

int
main(void)
{
	return run_tests(tests, (int) (sizeof(tests) / sizeof(tests[0])));
}
