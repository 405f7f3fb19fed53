/*
 * fairness.h: usage over time, for allot.fairness = recent and debt.
 *
 * Pure logic, like selection.h: no SPI, no allocation, no PostgreSQL
 * headers.  The glue (assignment.c, dispatch.c) reads the rows of
 * allot.workload_credit, calls these, and hands the result to the seed 000
 * selection as each candidate's usage (recent) or debt (debt).
 *
 * Credit is what work is estimated to be worth when it is handed out: a
 * job's est_secs times the peak FLOPS of the devices it runs on, an
 * assignment's threads times allot.assignment_ttl.  Seed 002 counts a job
 * the moment it is scheduled, "as if it had run for one scheduling period";
 * so does allot, so that each pick of a request sees the ones before it.
 *
 * recent  REC(w) = sum of credit c_i handed out at t_i, times
 *         2^-((now - t_i) / half_life).  It is kept per row as a value at an
 *         instant (rec, rec_at) and decayed on the way.
 * debt    seeds 001/003: per (workload, resource), what the workload is owed
 *         minus what it got.  Over an interval, the workloads eligible for a
 *         resource (active with work for it, or given some of it in the
 *         interval: seed 001's "if P supplies a job for R") share what the
 *         eligible ones got on it, in proportion to their throughputs:
 *             debt(w, r) += share(w) / S(r) * G(r) - got(w, r)
 *         so the net change is zero; then every row of the resource is
 *         shifted so that the largest debt is 0, which is where a new
 *         workload starts.  A workload's overall debt is the sum over
 *         resources; credit is already in FLOPs, so the sum is
 *         FLOPS-weighted.  The transitioner folds each interval's credit
 *         into the debts (allot.fold_debts); between folds a request adds
 *         the same formula over the credit sent since the last fold.
 */
#ifndef ALLOT_FAIRNESS_H
#define ALLOT_FAIRNESS_H

#include <stdbool.h>

/* Credit older than this many half-lives, or smaller, counts as 0. */
#define ALLOT_DECAY_MAX_HALF_LIVES 1000.0
#define ALLOT_DECAY_MIN_VALUE 1e-6

/* One (workload, resource) as the debt computation sees it. */
typedef struct DebtCell
{
	double		debt;			/* as of the last fold */
	double		sent;			/* credit handed out since the last fold */
	bool		eligible;		/* with work for this resource, or sent > 0 */
} DebtCell;

extern double allot_decay(double value, double age_secs, double half_life_secs);
extern void allot_overall_debts(const DebtCell *cells, const double *share,
								int n_workloads, int n_resources,
								double *overall);

#endif							/* ALLOT_FAIRNESS_H */
