/*
 * reliability.h: which hosts have earned trust, and when a job is sent
 * alone (issue 30: host reliability and adaptive replication, BOINC's
 * "reliable hosts").
 *
 * Each host keeps a record (allot.host_reliability): its valid results,
 * invalid results and failed sendings, its consecutive valid results since
 * the last failure, and an error rate, the average of its sendings'
 * outcomes (1 for an invalid result or a failed sending, 0 for a valid
 * one), each new outcome weighing ALLOT_ERROR_RATE_WEIGHT.
 *
 *   reliable   a host the operator vouches for (one it added itself, or of
 *              an owner it trusts), or one with allot.reliable_after
 *              consecutive valid results and an error rate within
 *              allot.reliable_max_error_rate
 *   alone      a job of a workload with adaptive_replication is sent alone
 *              only to a reliable host, and then with probability
 *              allot.reliable_alone_probability (a spot check otherwise);
 *              every other sending is replicated with a quorum of 2
 *
 * An invalid result or a failed sending sets the consecutive count to 0:
 * trust is lost at once and earned again result by result.
 *
 * Pure logic, and the same rules in SQL for the statements that apply them
 * (report_job, the transitioner's timeouts, validate_job).
 */
#ifndef ALLOT_RELIABILITY_H
#define ALLOT_RELIABILITY_H

#include <stdbool.h>

/* Weight of a new outcome in a host's error rate. */
#define ALLOT_ERROR_RATE_WEIGHT 0.05

/* Quorum of a job that adaptive replication replicates. */
#define ALLOT_ADAPTIVE_QUORUM 2

typedef struct HostTrust
{
	bool		vouched;		/* the operator's own, or its owner trusted */
	int			consecutive_valid;
	double		error_rate;
} HostTrust;

typedef struct TrustPolicy
{
	int			reliable_after;
	double		max_error_rate;
	double		alone_probability;
} TrustPolicy;

static inline bool
allot_host_reliable(const HostTrust *h, const TrustPolicy *p)
{
	return h->vouched ||
		(h->consecutive_valid >= p->reliable_after && h->error_rate <= p->max_error_rate);
}

/* Whether a job of an adaptive workload sent to this host is replicated;
 * draw is uniform in [0, 1). */
static inline bool
allot_replicate_sending(const HostTrust *h, const TrustPolicy *p, double draw)
{
	return !allot_host_reliable(h, p) || draw >= p->alone_probability;
}

static inline double
allot_error_rate_after(double rate, bool failed)
{
	return rate + ALLOT_ERROR_RATE_WEIGHT * ((failed ? 1.0 : 0.0) - rate);
}

/*
 * The same in SQL, over a row r of allot.host_reliability: the columns an
 * upsert sets after n more failed sendings ($n: an expression), and after a
 * result found valid or invalid at instant at, with reliable_after given.
 */
#define ALLOT_ERROR_RATE_AFTER_FAILURES_SQL(rate, n) \
	"(1 - (1 - " rate ") * power(1 - " CppAsString2(ALLOT_ERROR_RATE_WEIGHT) ", " n "))"

#endif							/* ALLOT_RELIABILITY_H */
