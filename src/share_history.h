/*
 * share_history.h: which minute a transitioner run's sample of the shares
 * belongs to, and which samples are past their retention (the pure part of
 * share_history.c, unit tested without PostgreSQL: test/unit).
 *
 * Vocabulary: a sample is what status_workload says of every workload that
 * is active or has a share or a fair share, at one minute; allot keeps a
 * sample a minute at most (allot.share_history, a row per workload).
 * Instants are PostgreSQL's TimestampTz: microseconds from 2000-01-01 UTC,
 * negative before it.
 */
#ifndef ALLOT_SHARE_HISTORY_H
#define ALLOT_SHARE_HISTORY_H

#include <stdint.h>

#define ALLOT_USECS_PER_MINUTE INT64_C(60000000)

/*
 * The minute an instant falls in, in UTC: the instant with its seconds cut
 * off, rounding down also before 2000.  UTC rather than the session's time
 * zone (date_trunc's), so that runs in sessions of different zones agree on
 * the minute, and zones whose offset is not whole minutes cannot put two
 * samples in one minute.
 */
static inline int64_t
allot_sample_minute(int64_t instant)
{
	int64_t		rest = instant % ALLOT_USECS_PER_MINUTE;

	return rest < 0 ? instant - rest - ALLOT_USECS_PER_MINUTE : instant - rest;
}

/*
 * Samples taken before this are past the retention: the minute of `now`
 * less `retention_secs` (0: every sample before this minute).  A caller's
 * now is within years 1970 to 9999 (entry.h) and the retention within 31
 * days (settings.h), so nothing here overflows.
 */
static inline int64_t
allot_sample_cutoff(int64_t now, int64_t retention_secs)
{
	return allot_sample_minute(now) - retention_secs * INT64_C(1000000);
}

#endif							/* ALLOT_SHARE_HISTORY_H */
