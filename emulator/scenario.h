/*
 * scenario.h: what a scenario file declares (the format is in README.md).
 *
 * A scenario is either a job farm (every workload has an app: BOINC-style,
 * request_work and report_job) or an assignment farm (no workload has an
 * app: OpenBench-style, assign_workload).  Times are virtual seconds from
 * the start of the run.
 */
#ifndef EMULATOR_SCENARIO_H
#define EMULATOR_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#define NAME_LEN 64
#define MAX_APPS 16
#define MAX_VERSIONS 8
#define MAX_WORKLOADS 32
#define MAX_HOST_GROUPS 16
#define MAX_CHOICES 16
#define MAX_EVENTS 64
#define MAX_SETTINGS 32

/* How the app units of a job are drawn. */
typedef enum
{
	DIST_FIXED,					/* a */
	DIST_UNIFORM,				/* between a and b */
	DIST_LOGNORMAL				/* mean a, sigma of the logarithm b */
} DistKind;

typedef struct Dist
{
	DistKind	kind;
	double		a;
	double		b;
} Dist;

typedef struct ScnVersion
{
	int			id;				/* allot.app_version.id */
	char		resource[NAME_LEN]; /* cpu, nvidia, amd, intel */
	double		ncpus;
	double		ncoprocs;
	double		efficiency;		/* fraction of the device's peak it reaches */
} ScnVersion;

typedef struct ScnApp
{
	char		name[NAME_LEN];
	double		flops_per_au;	/* true FLOPs of one app unit */
	int			nversions;
	ScnVersion	versions[MAX_VERSIONS];
} ScnApp;

typedef struct ScnWorkload
{
	char		name[NAME_LEN];
	char		engine[NAME_LEN];
	int			app;			/* index into apps; -1: assignment workload */
	double		throughput;
	int			priority;
	double		delay_bound;	/* seconds; job workloads */
	long		jobs;			/* how many jobs it starts with */
	Dist		app_units;
	double		predicted_au;	/* <= 0: the distribution's mean */
	int			threads;		/* dev and base threads (assignment workloads) */
	double		start;			/* when it is added */
	bool		adaptive_replication;	/* allot 0.7.0: replicate jobs of hosts
										 * not reliable */
} ScnWorkload;

typedef struct ScnHostGroup
{
	char		name[NAME_LEN];
	int			count;
	bool		registered;		/* registered itself (not the operator's):
								 * allot 0.7.0 trusts it only once proven */
	int			nchoices;		/* CPUs (threads) of a host: one of these */
	int			cpus[MAX_CHOICES];
	bool		hyperthreaded;	/* physical cores = threads / 2 */
	int			sockets;
	double		cpu_flops;		/* per CPU */
	int			gpus;
	char		gpu_type[NAME_LEN];
	double		gpu_flops;		/* peak, per GPU */
	double		availability;	/* fraction of time on */
	double		on_mean;		/* mean length of an on period */
} ScnHostGroup;

typedef enum
{
	EV_PRIORITY,
	EV_THROUGHPUT,
	EV_STATE,
	EV_VERSION
} EventKind;

typedef struct ScnEvent
{
	double		at;
	EventKind	kind;
	int			target;			/* workload index, or app index for EV_VERSION */
	double		value;			/* priority or throughput */
	char		state[NAME_LEN];
	ScnVersion	version;
	bool		done;
} ScnEvent;

typedef struct ScnSetting
{
	char		name[NAME_LEN];
	char		value[NAME_LEN];
} ScnSetting;

typedef struct Scenario
{
	char		name[NAME_LEN];
	bool		job_farm;
	double		length;
	double		tick;
	double		bucket;
	double		measure_from;
	uint64_t	seed;
	int			connections;
	double		transitioner_interval;
	bool		buffer_request;	/* request = buffer: the server computes it */
	double		min_buffer;
	double		max_buffer;
	double		request_interval;
	double		noise;
	double		assign_interval;
	double		assign_jitter;

	int			napps;
	ScnApp		apps[MAX_APPS];
	int			nworkloads;
	ScnWorkload workloads[MAX_WORKLOADS];
	int			ngroups;
	ScnHostGroup groups[MAX_HOST_GROUPS];
	int			nevents;
	ScnEvent	events[MAX_EVENTS];
	int			nsettings;
	ScnSetting	settings[MAX_SETTINGS];
} Scenario;

/* Parse a file; on error print "file:line: message" and return false. */
extern bool scenario_load(Scenario *scn, const char *path);

/* "name=value" from the command line, replacing a [set] line of that name. */
extern bool scenario_set(Scenario *scn, const char *assignment);

/* The value of a [set] setting, or NULL. */
extern const char *scenario_setting(const Scenario *scn, const char *name);

extern double dist_mean(const Dist *d);

/* "90", "10m", "1.5h", "3d", "1y" -> seconds; false if malformed. */
extern bool parse_duration(const char *text, double *secs);

#endif							/* EMULATOR_SCENARIO_H */
