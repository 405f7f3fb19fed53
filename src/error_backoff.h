/*
 * error_backoff.h: what a failed sending costs its host (issue 32, as
 * BOINC does it).
 *
 *   quota    each failure (an error, an abort, a loss, a timeout) halves
 *            the host's daily quota for the version, not below 1; each
 *            success doubles it back, up to allot.daily_quota (report.c).
 *            A host that crashes every job is down to 1 job a day in
 *            seven failures from 100
 *   backoff  a host whose sendings fail in a row is sent nothing for
 *            allot.error_backoff after the first failure, twice that after
 *            the second, and so on, at most allot.max_error_backoff;
 *            request_work tells it how long to wait.  A success ends the
 *            streak.  Only the host's own reports (and its own timeouts)
 *            move its streak: a report is accepted only from the host the
 *            job is in progress on
 *
 * The rules in SQL, for the statements that apply them (report.c,
 * transitioner.c).
 */
#ifndef ALLOT_ERROR_BACKOFF_H
#define ALLOT_ERROR_BACKOFF_H

/* The quota after n failures, in SQL, of a quota q (an SQL int). */
#define ALLOT_QUOTA_AFTER_FAILURES_SQL(q, n) \
	"greatest((" q ") >> least((" n ")::int, 30), 1)"

/*
 * The backoff's end after the streak s (an SQL int, the failures in a row
 * counted so far, this one included), from now $now, with first and most
 * the settings' seconds (SQL expressions).
 */
#define ALLOT_BACKOFF_UNTIL_SQL(now, s, first, most) \
	"(" now " + pg_catalog.make_interval(secs => least((" first ")::float8" \
	" * pg_catalog.power(2::float8, least((" s ") - 1, 59)), (" most ")::float8)))"

#endif							/* ALLOT_ERROR_BACKOFF_H */
