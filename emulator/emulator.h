/*
 * emulator.h: the fleet emulator's state.
 *
 * Vocabulary.  A *host* is one emulated machine: allot sees it as a row of
 * allot.host and hears from it only through the public functions.  A
 * *contact* is what one host sends at one tick, in one transaction: its
 * reports and its request (job farm) or its assign_workload call
 * (assignment farm).  A *tick* is the virtual-time step at which contacts
 * happen; between ticks each host runs its own jobs at their true speed,
 * at exact times.  A *bucket* is the period over which shares are measured.
 * A *run* (for monotony) is a stretch of time a host resource keeps
 * starting work of the same workload.
 */
#ifndef EMULATOR_H
#define EMULATOR_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "rng.h"
#include "scenario.h"

/* Virtual second 0 is this Unix time: 2026-01-01 00:00:00 UTC. */
#define VIRTUAL_EPOCH 1767225600.0
#define MAX_RESOURCES 4			/* cpu and up to three coprocessor types */
#define EPS 1e-9

typedef enum
{
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_FINISHED,				/* done, its report not sent yet */
	JOB_DROPPED					/* not started by its deadline: to abort */
} JobState;

typedef struct Job
{
	int64_t		id;
	int			workload;		/* scenario index */
	int			res;			/* index into the host's resources */
	JobState	state;
	double		usage;			/* instances it occupies */
	double		est_secs;		/* allot's estimate, sent with the job */
	double		sent_at;
	double		deadline;
	double		app_units;		/* true, drawn per job */
	double		flops;			/* true FLOPs of the job */
	double		true_secs;		/* true run time on this host */
	double		ran;			/* seconds run before the current segment */
	double		seg_start;		/* start of the running segment */
	double		finished_at;
} Job;

typedef struct HostRes
{
	int			global;			/* index into Emulator.resources */
	double		n;				/* instances */
	double		instance_flops;
	double		used;			/* instances busy now */
	double		backoff_until;
	int			run_workload;	/* monotony: the current run */
	double		run_start;
} HostRes;

typedef struct Host
{
	int64_t		id;				/* allot.host.id */
	int			group;
	int			conn;			/* which pipelined connection it uses */
	int			threads;
	int			cores;
	int			sockets;
	int			nres;
	HostRes		res[2];			/* [0] cpu, [1] its GPUs if any */

	bool		online;
	double		online_since;
	double		next_toggle;	/* next on/off switch; infinite if always on */
	Rng			avail;

	/* job farm: its queue, FIFO in the order received */
	Job		   *jobs;
	int			njobs;
	int			jobs_cap;
	double		last_request;

	/* assignment farm */
	int			workload;		/* what it runs now; -1: nothing */
	int			assigned;		/* what allot last assigned it; -1: none */
	double		work_since;
	double		next_assign;
	int			run_workload;
	double		run_start;
	Rng			jitter;

	double		wake;			/* next time it needs attention */
	int			heap_pos;
} Host;

/* One SQL call of a contact, its parameters in the tick's arena. */
#define MAX_PARAMS 8
typedef struct Call
{
	const char *stmt;
	int			nparams;
	const char *values[MAX_PARAMS];
	/* job farm reports: what the reported job was */
	bool		report;
	bool		success;
	int			workload;
	double		app_units;
	double		flops;
} Call;

typedef struct Contact
{
	Host	   *host;
	int			first_call;
	int			ncalls;
} Contact;

typedef void (*ResultFn) (void *ctx, Contact *c, Call *call, PGresult *res);

typedef struct Pipeline
{
	int			nconn;
	PGconn	   *conns[16];
	long		errors;
	char		first_error[512];
} Pipeline;

/* Measured over [measure_from, length] unless said otherwise. */
typedef struct Metrics
{
	int			nbuckets;
	double	   *work;			/* [bucket * nworkloads + w]: FLOPs, or thread-seconds */
	double	   *fair;			/* same shape: fair share */
	/* at each bucket end: eligible, priority, throughput, engine balance */
	bool	   *had_work;
	int		   *prio;
	double	   *throughput;

	double		avail[MAX_RESOURCES];	/* instance-seconds hosts were on */
	double		busy[MAX_RESOURCES];	/* instance-seconds running work */
	double		busy_by[MAX_WORKLOADS][MAX_RESOURCES];	/* the same per workload */
	double		flops_completed;
	double		flops_late;
	long		jobs_completed;
	long		jobs_late;
	long		jobs_dropped;
	double		run_sum;		/* monotony: sum of run lengths */
	double		run_sum_sq;
	long		runs;
	long		switches;

	long		requests;		/* request_work or assign_workload calls */
	long		requests_all;	/* the same over the whole run */
	long		reports_all;
	long		reports_refused;	/* already timed out: too late */
	long		transitioner_calls;
	long		calls_all;		/* every SQL call of the run */

	/* per workload, whole run: what allot accepted (for cross-checks) */
	long		done_jobs[MAX_WORKLOADS];
	double		done_app_units[MAX_WORKLOADS];
	double		done_flops[MAX_WORKLOADS];
} Metrics;

typedef struct Emulator
{
	Scenario	scn;
	const char *conninfo;
	const char *outdir;
	bool		quiet;
	bool		progress_tty;

	PGconn	   *control;		/* setup, events, transitioner, samples */
	bool		voices;			/* allot 0.7.0: owners, quorums, reliability */
	char		replication[512];	/* its summary lines (metrics.c) */
	double		replication_overhead;	/* replicas / results done */
	double		reliable_share;	/* hosts reliable at the end / hosts sent work */
	double		reliable_median_h;	/* time to reliable, median */
	char	   *to_validate;	/* "{id,id,...}": the tick's successes (0.7.0) */
	size_t		to_validate_len;
	size_t		to_validate_cap;
	Pipeline	pipe;

	int			nresources;
	char		resources[MAX_RESOURCES][NAME_LEN];

	int			nhosts;
	Host	   *hosts;
	Host	  **heap;
	int			heap_len;

	/* version id -> (app, version index); ids are small and dense */
	int			max_version_id;
	int		   *version_app;
	int		   *version_idx;

	/* workload state as last set (for fair shares) */
	bool		wl_present[MAX_WORKLOADS];
	bool		wl_active[MAX_WORKLOADS];
	int			wl_prio[MAX_WORKLOADS];
	double		wl_throughput[MAX_WORKLOADS];
	bool		balance;		/* allot.balance_engine_throughputs */

	/* per tick */
	Contact    *contacts;
	int			ncontacts;
	int			contacts_cap;
	Call	   *calls;
	int			ncalls;
	int			calls_cap;
	char	  **chunks;			/* the tick's parameter strings, in 1 MB chunks */
	int			nchunks;
	int			chunk;			/* the chunk being filled */
	size_t		chunk_used;
	double		now;

	/* scratch for the host buffer simulation */
	double	   *scratch;
	int			scratch_cap;

	double		last_transitioner;
	Metrics		m;
	double		wall_start;
	double		wall_setup;
	double		wall_run;
	double		last_progress;
	int			progress_decile;
} Emulator;

/* pipeline.c */
extern PGconn *connect_db(const char *conninfo);
extern bool pipeline_open(Emulator *em, int nconn);
extern void pipeline_close(Emulator *em);
extern bool pipeline_run(Emulator *em, ResultFn fn, void *ctx);
extern bool run_contacts(Emulator *em, ResultFn fn);
extern bool control_exec(Emulator *em, const char *sql);
extern PGresult *control_query(Emulator *em, const char *sql, int nparams, const char *const *values);
extern void tick_reset(Emulator *em);
extern const char *arena_printf(Emulator *em, const char *fmt,...) __attribute__((format(printf, 2, 3)));
extern Contact *contact_begin(Emulator *em, Host *h);
extern Call *contact_call(Emulator *em, Contact *c, const char *stmt);
extern bool prepare_all(Emulator *em, const char *name, const char *sql, int nparams);

/* farm_setup.c */
extern bool farm_create(Emulator *em);
extern bool apply_settings(Emulator *em, PGconn *conn);
extern bool apply_events(Emulator *em, double now);
extern bool sample_bucket(Emulator *em, int bucket);
extern bool run_transitioner(Emulator *em, double now);
extern bool end_of_tick(Emulator *em, double t, double *next_transitioner, int *bucket);
extern double next_event_at(const Emulator *em);
extern int	resource_index(Emulator *em, const char *name);

/* host.c */
extern void host_init_availability(Emulator *em, Host *h);
extern void host_advance(Emulator *em, Host *h, double t);
extern void host_add_job(Emulator *em, Host *h, int64_t job_id, int workload, int version_id,
						 double est_secs, double deadline);
extern void host_start_jobs(Emulator *em, Host *h, double t);
extern bool host_request(Emulator *em, Host *h, char *json, size_t len, double *wake);
extern double host_next_finish(const Host *h);
extern void host_finish_run(Emulator *em, Host *h);

/* heap of hosts by wake time */
extern void heap_push(Emulator *em, Host *h);
extern Host *heap_pop_due(Emulator *em, double t);
extern double heap_min(const Emulator *em);

/* job_farm.c, assignment_farm.c */
extern bool job_farm_run(Emulator *em);
extern bool assignment_farm_run(Emulator *em);

/* metrics.c */
extern bool metrics_init(Emulator *em);
extern void metrics_work(Emulator *em, int workload, double rate, double t1, double t2);
extern void metrics_busy(Emulator *em, int workload, int global_res, double instances,
						 double t1, double t2);
extern void metrics_avail(Emulator *em, int global_res, double instances, double t1, double t2);
extern void metrics_run(Emulator *em, double start, double end, bool switched);
extern void metrics_fair_shares(Emulator *em);
extern bool metrics_report(Emulator *em, bool consistent, const char *consistency);
extern double overlap_measured(const Emulator *em, double t1, double t2);
extern void progress(Emulator *em, double now, bool last);
extern double wall_clock(void);

/* chart.c */
extern bool chart_write(Emulator *em, const char *path);

#endif							/* EMULATOR_H */
