/*
 * settings.h: allot's settings (GUCs) and the rule that guards them.
 *
 * Every setting is farm policy, so every one is operator-only (PGC_SUSET):
 * superusers, and on PostgreSQL 15 and later the roles granted SET on it
 * (the extension grants that to allot_admin), may change it with SET,
 * ALTER DATABASE/ROLE ... SET or postgresql.conf; a web login cannot, so no
 * SET of its own can change what a request decides.
 *
 * allot is not preloaded, so a value set before its library loads in a
 * backend (postgresql.conf, ALTER DATABASE, a session's SET) waits as a
 * placeholder, and PostgreSQL applies it when the library defines the
 * setting, with only a WARNING when it cannot: a misspelt value or name, or
 * a value from a role that may not set it.  allot does not run a policy
 * other than the one written down: such a setting is remembered, and every
 * entry point then refuses to work (allot_check_settings) until the setting
 * is fixed at that level or above.
 */
#ifndef ALLOT_SETTINGS_H
#define ALLOT_SETTINGS_H

#include <stdbool.h>

extern bool allot_balance_engine_throughputs;
extern double allot_repeat_threshold;
extern double allot_repeat_upper;
extern bool allot_count_requester;
extern int	allot_assignment_ttl;	/* seconds */
extern int	allot_fairness;
extern int	allot_rec_half_life;	/* seconds */
extern int	allot_daily_quota;	/* jobs per (host, app version) per day */
extern double allot_default_seconds_per_app_unit;
extern int	allot_default_delay_bound;	/* seconds */
extern int	allot_max_jobs_per_request;
extern int	allot_flops_sample_size;
extern int	allot_app_unit_window;
extern double allot_flops_percentile;
extern double allot_flops_avg_weight;
extern double allot_gpu_efficiency;
extern int	allot_transitioner_batch;
extern int	allot_retention_period; /* seconds; 0: finished jobs stay */
extern int	allot_retention_batch;
extern bool allot_retention_archive;
extern int	allot_share_history_retention;	/* seconds; 0: no history */

/* The longest allot.share_history_retention: 31 days, 44,640 rows a workload. */
#define ALLOT_SHARE_HISTORY_MAX_RETENTION (31 * 24 * 3600)

extern int	allot_owner_max_hosts;
extern int	allot_owner_max_new_hosts_per_day;
extern double allot_unproven_cpu_flops;
extern double allot_unproven_coproc_flops;
extern int	allot_reliable_after;
extern double allot_reliable_alone_probability;
extern double allot_reliable_max_error_rate;

typedef enum FairnessMode
{
	FAIRNESS_CURRENT,			/* usage now */
	FAIRNESS_RECENT,			/* recent estimated credit (REC) */
	FAIRNESS_DEBT				/* long-term debt per (workload, resource) */
} FairnessMode;

/* _PG_init: define every setting, noting those that could not be applied. */
extern void allot_define_settings(void);

/* The first setting that could not be applied and still is not; NULL: none. */
extern const char *allot_settings_problem(void);

/* Every entry point: ERROR while a setting could not be applied. */
extern void allot_check_settings(void);

#endif							/* ALLOT_SETTINGS_H */
