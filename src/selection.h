/*
 * selection.h: which workload a host should work on (seed 000).
 *
 * Pure logic: no SPI, no memory allocation, no PostgreSQL headers.  The SQL
 * glue (assignment.c) fills these structures from the tables, calls the
 * functions below in the order of the seed's seven steps, and writes back
 * what they decide.
 *
 * Vocabulary (seed 000):
 *   candidate            a workload the host can run, at the highest priority
 *                        among those, restricted to its focus when any match
 *   threads              threads of the other hosts currently assigned to it
 *   effective throughput throughput, divided by the number of candidates of
 *                        the same engine when balancing is on
 *   ratio                threads / effective throughput
 *   fair ratio           sum of threads / sum of effective throughputs
 */
#ifndef ALLOT_SELECTION_H
#define ALLOT_SELECTION_H

#include <stdbool.h>
#include <stdint.h>

/* Ratios within this relative distance of the lowest are ties (step 7). */
#define ALLOT_TIE_EPSILON 1e-9

typedef enum WorkloadMode
{
	MODE_GAMES,
	MODE_SPSA_SINGLE,
	MODE_SPSA_MULTIPLE
} WorkloadMode;

/* A string list as the glue holds it: borrowed pointers. */
typedef struct NameList
{
	const char *const *names;
	int			count;
} NameList;

/* One compiler a public engine builds with: gcc, or gcc at 10.2 or later. */
typedef struct CompilerNeed
{
	const char *name;
	const char *min_version;	/* dotted numbers; NULL: any version */
} CompilerNeed;

/* What an engine needs from a host; an engine without a row needs nothing. */
typedef struct EngineNeeds
{
	const char *name;
	bool		any_system;		/* systems IS NULL */
	NameList	systems;
	NameList	cpu_flags;
	const CompilerNeed *compilers;	/* any one of them will do */
	int			n_compilers;	/* 0: no compiler needed */
	bool		is_private;
} EngineNeeds;

/* What a host offers. */
typedef struct HostOffer
{
	const char *os;				/* NULL: unknown, fits only any_system */
	NameList	cpu_flags;
	NameList	tokens;
	NameList	compiler_names; /* parallel to compiler_versions */
	NameList	compiler_versions;
	NameList	focus;
	int			threads;
	int			physical_cores;
	int			sockets;
	int			syzygy_max;
	bool		noisy;
} HostOffer;

/* What a workload asks of a host. */
typedef struct WorkloadNeeds
{
	const EngineNeeds *dev;		/* NULL: engine has no requirements */
	const EngineNeeds *base;	/* NULL: no base engine, or no requirements */
	int			dev_threads;
	int			base_threads;
	int			syzygy;
	bool		time_based;
	WorkloadMode mode;
} WorkloadNeeds;

/* Step 1, capability: the first reason a host cannot run a workload. */
typedef enum Unfit
{
	FIT = 0,
	UNFIT_EXCLUDED,				/* in the request's exclude list */
	UNFIT_OS,
	UNFIT_CPU_FLAGS,
	UNFIT_TOKEN,				/* private engine, host holds no token for it */
	UNFIT_COMPILER,				/* public engine, none of its compilers new enough */
	UNFIT_SYZYGY,
	UNFIT_THREADS,
	UNFIT_NOISY					/* noisy host, time-based workload */
} Unfit;

extern Unfit allot_host_unfit(const HostOffer *host, const WorkloadNeeds *w,
							  const EngineNeeds **engine);
extern const char *allot_unfit_text(Unfit unfit);
extern int	allot_usable_threads(const HostOffer *host, const WorkloadNeeds *w);

/*
 * Step 1 in two parts, so that a request can judge each engine once and
 * each group of workloads with the same needs once (workload_cache.c):
 * what decides whether a host can run a workload is its engines and these
 * few numbers.
 */
typedef struct FitNeeds
{
	const EngineNeeds *dev;		/* NULL: no requirements */
	const EngineNeeds *base;
	int			threads;		/* threads a game (pair, under SPSA) needs */
	bool		core_odds;		/* the engines use different thread counts */
	int			syzygy;
	bool		time_based;
} FitNeeds;

extern void allot_fit_needs(const WorkloadNeeds *w, FitNeeds *out);
extern Unfit allot_engine_unfit(const HostOffer *host, const EngineNeeds *e);
/* dev and base: allot_engine_unfit of the needs' two engines. */
extern Unfit allot_fit_unfit(const HostOffer *host, const FitNeeds *f, Unfit dev, Unfit base,
							 const EngineNeeds **engine);
extern int	allot_compare_versions(const char *a, const char *b);

/* Where a capable workload stands after steps 1 to 7. */
typedef enum CandidateStatus
{
	CANDIDATE = 0,
	LOWER_PRIORITY,				/* step 1: a higher priority is runnable */
	NOT_FOCUSED					/* step 1: the host's focus matched others */
} CandidateStatus;

typedef struct Candidate
{
	/* input */
	int64_t		workload_id;
	int32_t		priority;
	int			engine;			/* dense engine number, for balancing */
	bool		focus;			/* its engine is in the host's focus */
	double		throughput;
	double		threads;		/* counted threads of hosts not focus-assigned */
	double		focus_threads;	/* counted threads of focus-assigned hosts */
	double		debt;			/* overall debt, when params->by_debt */

	/* output */
	CandidateStatus status;
	double		counted_threads;	/* step 2 */
	double		effective_throughput;	/* step 3 */
	double		ratio;			/* step 4 */
	double		probability;	/* of being returned by this request */
} Candidate;

typedef struct SelectionParams
{
	bool		balance_engines;	/* allot.balance_engine_throughputs */
	double		repeat_threshold;	/* allot.repeat_threshold */
	double		repeat_upper;	/* allot.repeat_upper, 0 = off */
	bool		count_requester;	/* allot.count_requester */
	double		requester_threads;	/* added by count_requester */
	int64_t		last_workload_id;	/* 0: none */
	double		draw;			/* uniform in [0, 1), for step 7 ties */

	/*
	 * allot.fairness = debt: the ratio is how much less a candidate is owed
	 * than the most-owed one, so the lowest ratio is the largest debt; the
	 * last workload is repeated while it is owed no more than debt_slack
	 * less than that.
	 */
	bool		by_debt;
	double		debt_slack;
} SelectionParams;

typedef struct Selection
{
	int			chosen;			/* index into the candidates, -1: none */
	bool		focus_assigned;
	bool		repeated;		/* step 6 decided */
	double		fair_ratio;
	double		min_ratio;
} Selection;

extern bool allot_refine_candidates(Candidate *c, int n);
extern void allot_select(Candidate *c, int n, int n_engines, int *engine_counts,
						 const SelectionParams *params, Selection *out);

/*
 * Step 6 from sums (assignment.c's repeat path): whether allot_select
 * would repeat the last workload, decided without visiting every
 * candidate.  The sums may be added in another order than allot_select's,
 * and the lowest ratio found group by group, so they may differ from its
 * by rounding (relative 1e-12 at most for any real farm): a quotient
 * within ALLOT_REPEAT_MARGIN of a bound is UNSURE, and the caller runs
 * allot_select.  Only for allot.fairness = current.
 */
#define ALLOT_REPEAT_MARGIN 1e-9

typedef struct RepeatSums
{
	double		sum_threads;	/* counted threads of the candidates, and the
								 * requester's under count_requester */
	double		sum_throughput; /* their effective throughputs */
	double		min_ratio;		/* the lowest ratio among them (with the
								 * requester's threads, under count_requester) */
	double		last_ratio;		/* the last workload's, a candidate, exactly as
								 * allot_select computes it */
} RepeatSums;

typedef enum RepeatVerdict
{
	REPEAT_YES,					/* allot_select would repeat */
	REPEAT_NO,					/* it would not */
	REPEAT_UNSURE				/* too near a bound to tell: ask it */
} RepeatVerdict;

extern RepeatVerdict allot_repeat_from_sums(const RepeatSums *s, const SelectionParams *params);

/* Concurrency settings sent with an assignment (seed 000, end). */
typedef struct ConcurrencySettings
{
	int64_t		cutechess_count;
	int64_t		concurrency_per;
	int64_t		games_per_cutechess;	/* may exceed int: the glue checks */
} ConcurrencySettings;

extern ConcurrencySettings allot_concurrency(const HostOffer *host,
											 const WorkloadNeeds *w,
											 int workload_size);

/* Deterministic random numbers for seeded calls (splitmix64). */
extern uint64_t allot_random_next(uint64_t *state);
extern double allot_random_uniform(uint64_t *state);

#endif							/* ALLOT_SELECTION_H */
