/*
 * assign.h: one assign_workload call, stage by stage (seed 000).
 *
 *   assign.c          the entry point: the host's locks, then the stages
 *   assign_host.c     read    the host and its assignment
 *   assign_read.c     read    what the choice needs: the backend's copy of
 *                             the usage less what lapsed and the requester's
 *                             own (or, for explain_assignment, an exclude
 *                             list and schemas before 0.6.0, the candidates'
 *                             usage read whole), credit under recent or debt
 *   assign_pick.c     pick    steps 1 to 7: the groups a host can run, the
 *                             repeat from their sums, or allot_select over
 *                             the candidates
 *   assign_commit.c   commit  the choice recorded: a repeat's seen_at at the
 *                             row it read, a switch's assignment and host
 *                             rows; the reply
 *
 * The common request, a repeat of a host whose assignment counts, runs no
 * SQL statement: its reads and its one write go to the tables directly
 * (table_read.h, table_write.h), and so it needs no search_path.  Every
 * other request opens SQL (allot_assign_sql) when it first needs it, which
 * pins search_path as the function's SET clause did before 0.7.0.
 *
 * Pure logic the stages call: selection.h (which workload), fairness.h
 * (usage over time).  Mechanisms: workload_cache.h, usage_cache.h (the
 * copy), entry.h (the watch list of lapsing assignments, the sweep).
 */
#ifndef ALLOT_ASSIGN_H
#define ALLOT_ASSIGN_H

#include "postgres.h"

#include "access/htup.h"
#include "datatype/timestamp.h"
#include "fmgr.h"

#include "entry.h"
#include "selection.h"
#include "table_read.h"
#include "usage_cache.h"
#include "workload_cache.h"

/* The host as a request sees it. */
typedef struct AssignHost
{
	int64		id;
	HostOffer	offer;
	int64		last_workload_id;	/* 0: none */
	HeapTuple	host_row;		/* as read, t_self where it was found */
	bool		has_assignment; /* a row in allot.assignment, counted or not */
	int64		assigned_workload;	/* 0: none, or not counted now */
	int32		assigned_threads;
	bool		assigned_focus;
	HeapTuple	assignment_row; /* as read, when counted now; else NULL */
	/*
	 * Where the assignment's HOT chain starts, as host.assignment_tid
	 * remembers it (a hint, invalid when NULL) and as the read found it
	 * (invalid when there is no assignment).  hint_column: the schema has
	 * host.assignment_tid (0.8.0 on).
	 */
	bool		hint_column;
	ItemPointerData assignment_hint;
	ItemPointerData assignment_root;
	/* A writer's two tables, kept open from the read to the write. */
	AllotTable	host_table;
	AllotTable	assignment_table;
} AssignHost;

/*
 * Every active assignment workload judged for one host, and the selection
 * over its candidates: explain_assignment's view, and the path of a request
 * with an exclude list or on a schema before 0.6.0.
 */
typedef struct AssignSelection
{
	const WorkloadCache *cache;
	Candidate  *cand;			/* the capable workloads, in cache order */
	int		   *cache_index;	/* cand[i] is cache->workloads[cache_index[i]] */
	int			n;
	int			fairness;		/* allot.fairness, checked against the schema */
	Unfit	   *unfit;			/* per cache workload */
	const EngineNeeds **unfit_engine;	/* the engine an engine check failed on */
	Selection	selection;
	int			found;			/* allot_assignment_usage's flags */
	LapsedUsage lapsed;			/* and the lapsed hosts it found */
} AssignSelection;

/* The groups a request's candidates are in: step 1, group by group. */
typedef struct GroupPick
{
	bool	   *chosen;			/* per group: its members are candidates */
	int32		top;			/* their priority */
	bool		focus_assigned;
	int		   *engine_count;	/* candidates per dev engine (step 3) */
	int			n_candidates;
} GroupPick;

/* Threads subtracted from some workloads: the lapsed, and the requester's. */
typedef struct Corrections
{
	UsageDelta *d;				/* sorted by workload, one entry each */
	int			n;
} Corrections;

/* SQL as a request opens it (allot_assign_sql): SPI, search_path pinned. */
typedef struct AssignSql
{
	bool		open;
	int			guc_level;		/* -1: search_path was already pinned */
} AssignSql;

typedef struct Assign
{
	/* the call */
	int64		host_id;
	TimestampTz now;
	TimestampTz cutoff;			/* assignments seen before it no longer count */
	int64	   *exclude;		/* sorted; NULL: none */
	int			n_exclude;
	double		draw;			/* uniform in [0, 1), for step 7 */
	int			fairness;		/* allot.fairness */
	AssignSql	sql;

	/* read */
	AssignHost	host;
	const WorkloadCache *cache;
	const UsageCache *usage;	/* NULL: the candidates' usage is read whole */
	GroupPick	groups;
	Corrections corrections;
	int			found;			/* what the usage read found to tidy */
	LapsedUsage lapsed;			/* and what lapsed, as it found it */

	/* picked: an index into cache->workloads, -1 when nothing fits */
	int			chosen;
	bool		focus_assigned;
	bool		repeated;
} Assign;

/* assign.c */
extern void allot_assign_sql(Assign *a);
extern int64 *allot_exclude_arg(FunctionCallInfo fcinfo, int argno, int *n);

/* assign_host.c */
extern void allot_read_assign_host(AssignHost *host, int64 host_id, TimestampTz cutoff,
								   bool fresh);
extern void allot_close_assign_host(AssignHost *host);

/* assign_read.c */
extern void allot_read_assign_usage(Assign *a);
extern void allot_read_candidate_usage(AssignSelection *rs, const AssignHost *host,
									   TimestampTz cutoff, bool writer);
extern void allot_read_candidate_credit(AssignSelection *rs, TimestampTz now, int mode);
extern const UsageDelta *allot_correction_of(const Corrections *c, int workload);
extern bool allot_usage_row_busy(int64 workload_id);

/* assign_pick.c */
extern void allot_pick_groups(Assign *a);
extern void allot_pick_assignment(Assign *a);
extern void allot_select_for_host(AssignSelection *rs, const AssignHost *host,
								  const int64 *exclude, int n_exclude, TimestampTz now,
								  double u, bool read_only);
extern double allot_assignment_credit(const AssignHost *host);

/* assign_commit.c */
extern void allot_commit_assignment(Assign *a);
extern HeapTuple allot_assign_reply(Assign *a, TupleDesc desc);

#endif							/* ALLOT_ASSIGN_H */
