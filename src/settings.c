/*
 * settings.c: allot's settings, and the settings that could not be applied
 * (see settings.h for the rule).
 *
 * Protocol: allot_define_settings() runs once per backend, from _PG_init.
 * Before defining its settings it records every "allot.*" placeholder
 * PostgreSQL holds (name, value, where it came from); after defining them it
 * compares: a placeholder whose value did not become the setting's value
 * (its source is not the setting's source now), or whose name allot does
 * not know, is a problem.  Problems live in TopMemoryContext for the life of
 * the backend; one is solved when the setting is later set at its level or
 * above in this session (allot_settings_problem checks the source again).
 */
#include "postgres.h"

#include <limits.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/memutils.h"

#include "settings.h"

bool		allot_balance_engine_throughputs = false;
double		allot_repeat_threshold = 0.75;
double		allot_repeat_upper = 0;
bool		allot_count_requester = false;
int			allot_assignment_ttl = 120;
int			allot_fairness = FAIRNESS_CURRENT;
int			allot_rec_half_life = 10 * 24 * 3600;
int			allot_daily_quota = 100;
double		allot_default_seconds_per_app_unit = 3600;
int			allot_default_delay_bound = 7 * 24 * 3600;
int			allot_max_jobs_per_request = 1000;
int			allot_flops_sample_size = 100;
int			allot_app_unit_window = 1000;
double		allot_flops_percentile = 0.05;
double		allot_flops_avg_weight = 0.1;
double		allot_gpu_efficiency = 1.0;
int			allot_transitioner_batch = 10000;
int			allot_retention_period = 30 * 24 * 3600;
int			allot_retention_batch = 10000;
bool		allot_retention_archive = true;

/* The shortest retention period that is not 0 (off): an hour. */
#define RETENTION_PERIOD_MIN 3600
int			allot_share_history_retention = 24 * 3600;
int			allot_owner_max_hosts = 100;
int			allot_owner_max_new_hosts_per_day = 10;
double		allot_unproven_cpu_flops = 1e9;
double		allot_unproven_coproc_flops = 1e12;
int			allot_reliable_after = 10;
double		allot_reliable_alone_probability = 0.9;
double		allot_reliable_max_error_rate = 0.05;
double		allot_default_bound_factor = 10;
int			allot_bound_min_reports = 10;
int			allot_unsendable_after = 24 * 3600;
bool		allot_retry_failed_hosts = false;
int			allot_error_backoff = 60;
int			allot_max_error_backoff = 24 * 3600;

static const struct config_enum_entry fairness_options[] = {
	{"current", FAIRNESS_CURRENT, false},
	{"recent", FAIRNESS_RECENT, false},
	{"debt", FAIRNESS_DEBT, false},
	{NULL, 0, false}
};

/*
 * A retention period is 0 (keep every job) or at least an hour: a bare
 * number is read as seconds, and "30" meant as days would otherwise empty
 * the farm's history at the next transitioner run.
 */
static bool
check_retention_period(int *newval, void **extra, GucSource source)
{
	if (*newval == 0 || *newval >= RETENTION_PERIOD_MIN)
		return true;
	GUC_check_errdetail("allot.retention_period must be 0 (finished jobs stay) or at least 1h, not %d s.",
						*newval);
	GUC_check_errhint("A number without a unit is seconds: write '30d' for thirty days.");
	return false;
}

/* A placeholder that did not become its setting's value. */
typedef struct SettingProblem
{
	char	   *name;
	char	   *value;
	GucSource	source;
	const char *what;			/* why it was not applied */
} SettingProblem;

#define MAX_PROBLEMS 8

static SettingProblem problems[MAX_PROBLEMS];
static int	n_problems = 0;

static struct config_generic **
all_settings(int *n)
{
#if PG_VERSION_NUM >= 160000
	return get_guc_variables(n);
#else
	*n = GetNumConfigOptions();
	return get_guc_variables();
#endif
}

static struct config_generic *
find_setting(const char *name)
{
	int			n;
	struct config_generic **vars = all_settings(&n);

	for (int i = 0; i < n; i++)
		if (vars[i] != NULL && pg_strcasecmp(vars[i]->name, name) == 0)
			return vars[i];
	return NULL;
}

static void
note_problem(const char *name, const char *value, GucSource source, const char *what)
{
	MemoryContext old;

	if (n_problems == MAX_PROBLEMS)
		return;					/* the first ones are enough to act on */
	old = MemoryContextSwitchTo(TopMemoryContext);
	problems[n_problems].name = pstrdup(name);
	problems[n_problems].value = pstrdup(value ? value : "");
	problems[n_problems].source = source;
	problems[n_problems].what = what;
	n_problems++;
	MemoryContextSwitchTo(old);
}

/*
 * A backend that loads allot inside a parallel operation finds the allot.*
 * settings made for it (ALTER DATABASE or ROLE ... SET, the leader's own in
 * a worker) as placeholders, and defining the settings applies them.
 * PostgreSQL refuses a setting in parallel mode unless it is marked as
 * allowed there: a leader whose first call of allot is in such a query (a
 * C function in its plan above the Gather or in its share of the scan), or
 * a worker, sent the client a WARNING per setting, and went on with the
 * defaults.  Every participant applies the same values, so allowing it
 * keeps them alike, which is what the refusal guards.  Minor releases
 * before November 2024 (13.17, 14.14, 15.9, 16.5, 17.1) lack the mark;
 * there a worker leaves parallel mode to define them (below), and a leader
 * still warns.
 */
#ifdef GUC_ALLOW_IN_PARALLEL
#define SETTING_FLAGS GUC_ALLOW_IN_PARALLEL
#else
#define SETTING_FLAGS 0
#endif

static void
define_all(void)
{
	DefineCustomBoolVariable("allot.balance_engine_throughputs",
							 "Divide each workload's throughput by its engine's number of candidates.",
							 "Seed 000 step 3.",
							 &allot_balance_engine_throughputs, false,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.repeat_threshold",
							 "A host repeats its last workload while every candidate's ratio is above this fraction of fair.",
							 "Seed 000 step 6.",
							 &allot_repeat_threshold, 0.75, 0.0, 1000.0,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.repeat_upper",
							 "Refuse a repeat unless the last workload's ratio is below this multiple of fair; 0 disables.",
							 "OpenBench 2024+ uses 1.25.",
							 &allot_repeat_upper, 0.0, 0.0, 1000.0,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomBoolVariable("allot.count_requester",
							 "Add the requesting host's threads to every candidate, and once to fair, before comparing.",
							 "OpenBench 2024+ behaviour.",
							 &allot_count_requester, false,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.assignment_ttl",
							"An assignment counts while its host was seen this recently.",
							NULL,
							&allot_assignment_ttl, 120, 1, 365 * 24 * 3600,
							PGC_SUSET, SETTING_FLAGS | GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomEnumVariable("allot.fairness",
							 "What usage is compared when choosing a workload.",
							 "current: threads or FLOPS in use now (seed 000); recent: recent estimated credit, "
							 "decayed with allot.rec_half_life (seed 002); debt: long-term debt per workload and "
							 "resource (seeds 001, 003).",
							 &allot_fairness, FAIRNESS_CURRENT, fairness_options,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.rec_half_life",
							"Half-life of recent estimated credit, for allot.fairness = recent.",
							NULL,
							&allot_rec_half_life, 10 * 24 * 3600, 1, INT_MAX,
							PGC_SUSET, SETTING_FLAGS | GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.daily_quota",
							"Jobs a host may take per app version per day, at most.",
							"Each error, abort or timeout halves a host's quota (not below 1); each success doubles it back up to this.",
							&allot_daily_quota, 100, 1, 1000000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.default_seconds_per_app_unit",
							 "Run-time estimate per app unit when nothing better is known.",
							 "Seed 004: the last step of the estimate's fallback chain.",
							 &allot_default_seconds_per_app_unit, 3600, 1e-6, 1e9,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.default_delay_bound",
							"Deadline of a job, after it is sent, when its workload sets no delay_bound.",
							"Every job sent has a deadline, so a host that vanishes gives its jobs back.",
							&allot_default_delay_bound, 7 * 24 * 3600, 1, 50 * 365 * 24 * 3600,
							PGC_SUSET, SETTING_FLAGS | GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.max_jobs_per_request",
							"The most jobs one request_work call sends.",
							NULL,
							&allot_max_jobs_per_request, 1000, 1, 100000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.flops_sample_size",
							"Raw FLOPS per app unit collected per app and kind before a percentile is taken.",
							"Seed 004's N.",
							&allot_flops_sample_size, 100, 1, 1000000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.app_unit_window",
							"Validated reports per app that its app-unit statistics are computed from, the most recent.",
							"Each host is one voice among them, however many it sent.",
							&allot_app_unit_window, 1000, 2, 100000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.flops_percentile",
							 "The percentile of raw FLOPS per app unit taken as the app's figure.",
							 "Seed 004: the most efficient hosts set the estimate.",
							 &allot_flops_percentile, 0.05, 0.0, 1.0,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.flops_avg_weight",
							 "Weight of a new percentile in the exponential average est_flops_per_au.",
							 NULL,
							 &allot_flops_avg_weight, 0.1, 0.0, 1.0,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.gpu_efficiency",
							 "Scale of a GPU-only app's figure when no app has both CPU and GPU figures.",
							 "Seed 004 note 2; otherwise the average CPU/GPU ratio of apps with both is used.",
							 &allot_gpu_efficiency, 1.0, 1e-9, 1e9,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.transitioner_batch",
							"Rows each step of run_transitioner handles per call, at most.",
							NULL,
							&allot_transitioner_batch, 10000, 1, 10000000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.retention_period",
							"How long finished jobs (done, error) and their reports stay in allot.job and allot.job_report.",
							"0 keeps them for ever; otherwise at least 1h. The transitioner then moves "
							"older ones out, keeping their counts and credit.",
							&allot_retention_period, 30 * 24 * 3600, 0, INT_MAX,
							PGC_SUSET, SETTING_FLAGS | GUC_UNIT_S, check_retention_period, NULL, NULL);
	DefineCustomIntVariable("allot.retention_batch",
							"Finished jobs one purge (a transitioner run, or purge_finished) moves out, at most.",
							NULL,
							&allot_retention_batch, 10000, 1, 10000000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomBoolVariable("allot.retention_archive",
							 "Keep purged jobs and their reports in allot.job_archive; off deletes them.",
							 NULL,
							 &allot_retention_archive, true,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.share_history_retention",
							"How long allot.share_history keeps each workload's share, a row a minute.",
							"run_transitioner writes the rows and deletes older ones; 0 keeps none.",
							&allot_share_history_retention, 24 * 3600, 0, ALLOT_SHARE_HISTORY_MAX_RETENTION,
							PGC_SUSET, SETTING_FLAGS | GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.owner_max_hosts",
							"Hosts one owner may have, at most: register_host refuses more.",
							"A host costs nothing to make; an owner (an account) is the unit of trust.",
							&allot_owner_max_hosts, 100, 1, 1000000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.owner_max_new_hosts_per_day",
							"Hosts one owner may register in 24 hours, at most.",
							NULL,
							&allot_owner_max_new_hosts_per_day, 10, 1, 1000000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.unproven_cpu_flops",
							 "FLOPS a CPU of a host that has proven nothing counts for at most, while the farm has no median.",
							 "Once the farm has a median of its proven hosts, such a host counts for that median at most.",
							 &allot_unproven_cpu_flops, 1e9, 1, 1e18,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.unproven_coproc_flops",
							 "FLOPS a coprocessor of a host that has proven nothing counts for at most, while the farm has no median.",
							 NULL,
							 &allot_unproven_coproc_flops, 1e12, 1, 1e18,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.reliable_after",
							"Consecutive valid results after which a host is reliable: adaptive replication may let it run jobs alone.",
							NULL,
							&allot_reliable_after, 10, 1, 1000000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.reliable_alone_probability",
							 "Probability that a reliable host runs a job of an adaptive workload alone; otherwise it is replicated as a spot check.",
							 NULL,
							 &allot_reliable_alone_probability, 0.9, 0.0, 1.0,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.reliable_max_error_rate",
							 "A host whose error rate is above this is not reliable, whatever its valid results.",
							 "The error rate is an average of its sendings' failures (errors, aborts, losses, timeouts, invalid results), each weighing 1/20.",
							 &allot_reliable_max_error_rate, 0.05, 0.0, 1.0,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.default_bound_factor",
							 "A job's bound, in times its estimate, while its app's run-time spread is unknown.",
							 "Used when app units say nothing of the spread and fewer than allot.bound_min_reports "
							 "validated reports have come in: no job goes out bounded by its estimate alone.",
							 &allot_default_bound_factor, 10, 1, 1e6,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.bound_min_reports",
							"Validated reports in an app's window before its run-time spread sets bounds.",
							NULL,
							&allot_bound_min_reports, 10, 2, 1000000,
							PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.unsendable_after",
							"How long a failed job may stay unsent before it ends in error as unsendable.",
							"A host is never sent a job it failed; a job every asking host has failed would "
							"otherwise wait for ever.",
							&allot_unsendable_after, 24 * 3600, 1, INT_MAX,
							PGC_SUSET, SETTING_FLAGS | GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomBoolVariable("allot.retry_failed_hosts",
							 "Let an unsendable job go once to a host that failed it once, before it ends in error.",
							 NULL,
							 &allot_retry_failed_hosts, false,
							 PGC_SUSET, SETTING_FLAGS, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.error_backoff",
							"How long a host is sent nothing after a failed sending; doubles per failure in a row.",
							NULL,
							&allot_error_backoff, 60, 0, INT_MAX,
							PGC_SUSET, SETTING_FLAGS | GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.max_error_backoff",
							"The longest backoff failures in a row earn a host.",
							NULL,
							&allot_max_error_backoff, 24 * 3600, 0, INT_MAX,
							PGC_SUSET, SETTING_FLAGS | GUC_UNIT_S, NULL, NULL, NULL);
}

/* The "allot.*" placeholders waiting to be applied, as they are now. */
typedef struct Pending
{
	const char *name;
	const char *value;
	GucSource	source;
} Pending;

static int
pending_placeholders(Pending **out)
{
	int			n;
	struct config_generic **vars = all_settings(&n);
	Pending    *p = palloc(sizeof(Pending) * (n + 1));
	int			k = 0;

	for (int i = 0; i < n; i++)
	{
		struct config_generic *g = vars[i];

		if (g == NULL || !(g->flags & GUC_CUSTOM_PLACEHOLDER) ||
			pg_strncasecmp(g->name, "allot.", 6) != 0)
			continue;
		/* Placeholders are strings; names and values are copied: the
		 * definitions below replace them. */
		p[k].name = pstrdup(g->name);
		p[k].value = pstrdup(*((struct config_string *) g)->variable ?
							 *((struct config_string *) g)->variable : "");
		p[k].source = g->source;
		k++;
	}
	*out = p;
	return k;
}

void
allot_define_settings(void)
{
	Pending    *pending;
	int			n = pending_placeholders(&pending);
#ifdef GUC_ALLOW_IN_PARALLEL
	define_all();
#else
	/* Without the mark (SETTING_FLAGS), a worker only. */
	bool		worker = IsParallelWorker() && IsInParallelMode();

	if (worker)
		ExitParallelMode();
	define_all();
	if (worker)
		EnterParallelMode();
#endif

	for (int i = 0; i < n; i++)
	{
		struct config_generic *g = find_setting(pending[i].name);

		if (g == NULL || (g->flags & GUC_CUSTOM_PLACEHOLDER))
			note_problem(pending[i].name, pending[i].value, pending[i].source,
						 "is not a setting of allot");
		else if (g->source != pending[i].source)
		{
			/*
			 * Rejected: tell a bad value from a role that may not set it (a
			 * check only, changeVal false: -1 valid, 0 invalid).
			 */
			bool		valid = set_config_option(pending[i].name, pending[i].value,
												  PGC_SUSET, PGC_S_TEST, GUC_ACTION_SET,
												  false, DEBUG1, false) != 0;

			note_problem(g->name, pending[i].value, pending[i].source,
						 valid ? "was set by a role that may not change allot's policy" :
						 "is not a valid value");
		}
	}

#if PG_VERSION_NUM >= 150000
	MarkGUCPrefixReserved("allot");
#else
	EmitWarningsOnPlaceholders("allot");
#endif
}

/* Where a setting was made, in the words an operator uses. */
static const char *
source_text(GucSource source)
{
	switch (source)
	{
		case PGC_S_FILE:
			return "from postgresql.conf";
		case PGC_S_ARGV:
			return "from the server's command line";
		case PGC_S_GLOBAL:
			return "from ALTER SYSTEM";
		case PGC_S_DATABASE:
			return "from ALTER DATABASE ... SET";
		case PGC_S_USER:
			return "from ALTER ROLE ... SET";
		case PGC_S_DATABASE_USER:
			return "from ALTER ROLE ... IN DATABASE ... SET";
		case PGC_S_CLIENT:
			return "from the connection's options";
		case PGC_S_SESSION:
			return "from SET in this session";
		default:
			return psprintf("from the %s", GucSource_Names[source]);
	}
}

const char *
allot_settings_problem(void)
{
	for (int i = 0; i < n_problems; i++)
	{
		SettingProblem *p = &problems[i];
		struct config_generic *g = find_setting(p->name);

		/* Set again at the problem's level or above: this session is fine. */
		if (g != NULL && !(g->flags & GUC_CUSTOM_PLACEHOLDER) && g->source >= p->source)
			continue;
		return psprintf("%s = \"%s\" (%s) %s", p->name, p->value,
						source_text(p->source), p->what);
	}
	return NULL;
}

void
allot_check_settings(void)
{
	const char *problem;

	if (likely(n_problems == 0))
		return;
	problem = allot_settings_problem();
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("allot's settings are not in force: %s", problem),
				 errdetail("allot schedules only with the policy written down, never with a default in its place."),
				 errhint("Correct or reset the setting where it was made (ALTER DATABASE or ALTER ROLE ... SET, "
						 "postgresql.conf, or this session), then reconnect.")));
}
