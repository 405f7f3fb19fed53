/*
 * fairness.c: recent estimated credit and long-term debt (see fairness.h).
 */
#include <math.h>

#include "fairness.h"

/*
 * value * 2^(-age / half_life), as allot.decay() computes it in SQL: no
 * decay for a negative age (a caller whose virtual time runs behind the
 * row's), and 0 beyond ALLOT_DECAY_MAX_HALF_LIVES or below
 * ALLOT_DECAY_MIN_VALUE, so that SQL's product can never underflow.
 */
double
allot_decay(double value, double age_secs, double half_life_secs)
{
	double		half_lives = age_secs / half_life_secs;

	if (!(half_lives > 0))
		return value;
	if (half_lives >= ALLOT_DECAY_MAX_HALF_LIVES || value < ALLOT_DECAY_MIN_VALUE)
		return 0;
	return value * exp2(-half_lives);
}

/*
 * Each workload's overall debt as the next fold would leave it, before the
 * shift that puts the largest at 0 (a shift moves every workload alike, so
 * comparisons do not need it).  cells[w * n_resources + r]; share[w] is the
 * workload's throughput.
 */
void
allot_overall_debts(const DebtCell *cells, const double *share,
					int n_workloads, int n_resources, double *overall)
{
	for (int w = 0; w < n_workloads; w++)
		overall[w] = 0;

	for (int r = 0; r < n_resources; r++)
	{
		double		shares = 0,
					got = 0;

		for (int w = 0; w < n_workloads; w++)
		{
			const DebtCell *c = &cells[w * n_resources + r];

			if (c->eligible)
			{
				shares += share[w];
				got += c->sent;
			}
		}
		for (int w = 0; w < n_workloads; w++)
		{
			const DebtCell *c = &cells[w * n_resources + r];

			overall[w] += c->debt;
			/* What an ineligible workload got is nobody's debt. */
			if (c->eligible)
				overall[w] += share[w] / shares * got - c->sent;
		}
	}
}
