/*
 * farm_setup.c: the farm in allot's tables, the scenario's settings and
 * events, and the control connection's periodic work (transitioner, bucket
 * samples).  Everything is plain SQL on the tables of docs/functions.md "Tables".
 *
 * Ids: app i is allot.app id i+1, workload i is allot.workload id i+1, host
 * i is allot.host id i+1, and app versions have the ids the parser gave
 * them.  The database must not hold a farm already.
 */
#include "emulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
resource_index(Emulator *em, const char *name)
{
	for (int i = 0; i < em->nresources; i++)
		if (!strcmp(em->resources[i], name))
			return i;
	if (em->nresources == MAX_RESOURCES)
	{
		fprintf(stderr, "too many resource types (at most %d)\n", MAX_RESOURCES);
		exit(2);
	}
	snprintf(em->resources[em->nresources], NAME_LEN, "%s", name);
	return em->nresources++;
}

/* SET every [set] line on a connection.  allot's library is loaded first
 * (by calling one of its functions), so that allot's own checks validate
 * the values instead of PostgreSQL keeping unchecked placeholders. */
bool
apply_settings(Emulator *em, PGconn *conn)
{
	PGresult   *res = PQexec(conn, "SELECT allot.percentile_disc('{1}', 0.5)");
	bool		ok = PQresultStatus(res) == PGRES_TUPLES_OK;

	PQclear(res);
	if (!ok)
	{
		fprintf(stderr, "is allot installed in this database? %s", PQerrorMessage(conn));
		return false;
	}
	for (int i = 0; i < em->scn.nsettings; i++)
	{
		const char *values[2] = {em->scn.settings[i].name, em->scn.settings[i].value};

		res = PQexecParams(conn, "SELECT set_config($1, $2, false)", 2, NULL, values, NULL, NULL, 0);
		ok = PQresultStatus(res) == PGRES_TUPLES_OK;
		PQclear(res);
		if (!ok)
		{
			fprintf(stderr, "SET %s = %s: %s", values[0], values[1], PQerrorMessage(conn));
			return false;
		}
	}
	return true;
}

static bool
exec_params(Emulator *em, const char *sql, int n, const char *const *values)
{
	PGresult   *res = control_query(em, sql, n, values);

	if (res == NULL)
		return false;
	PQclear(res);
	return true;
}

static bool
insert_version(Emulator *em, int app, const ScnVersion *v)
{
	char		id[16], app_id[16], ncpus[32], ncoprocs[32];
	const char *values[5] = {id, app_id, v->resource, ncpus, ncoprocs};

	snprintf(id, sizeof(id), "%d", v->id);
	snprintf(app_id, sizeof(app_id), "%d", app + 1);
	snprintf(ncpus, sizeof(ncpus), "%.17g", v->ncpus);
	snprintf(ncoprocs, sizeof(ncoprocs), "%.17g", v->ncoprocs);
	(void) resource_index(em, v->resource);
	/* A coprocessor type allot does not know yet is added first. */
	return exec_params(em,
					   "WITH r AS (INSERT INTO allot.resource (name) VALUES ($3) ON CONFLICT DO NOTHING) "
					   "INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) "
					   "VALUES ($1, $2, $3, $4, $5)", 5, values);
}

/* Insert workload i and its jobs. */
static bool
insert_workload(Emulator *em, int i)
{
	const ScnWorkload *w = &em->scn.workloads[i];
	char		id[16], app[16], prio[16], tp[32], bound[32], threads[16], jobs[32], pau[32];
	const char *values[9] = {id, w->name, w->engine, w->app >= 0 ? app : NULL, prio, tp,
	w->app >= 0 ? bound : NULL, threads};
	const char *job_values[3] = {id, pau, jobs};

	snprintf(id, sizeof(id), "%d", i + 1);
	snprintf(app, sizeof(app), "%d", w->app + 1);
	snprintf(prio, sizeof(prio), "%d", w->priority);
	snprintf(tp, sizeof(tp), "%.17g", w->throughput);
	snprintf(bound, sizeof(bound), "%.0f seconds", w->delay_bound);
	snprintf(threads, sizeof(threads), "%d", w->threads);
	snprintf(jobs, sizeof(jobs), "%ld", w->jobs);
	snprintf(pau, sizeof(pau), "%.17g", w->predicted_au);
	if (!exec_params(em,
					 "INSERT INTO allot.workload (id, name, engine, app_id, priority, throughput,"
					 " delay_bound, dev_threads, base_threads)"
					 " VALUES ($1, $2, $3, $4, $5, $6, $7::interval, $8, $8)", 8, values))
		return false;
	if (w->adaptive_replication &&
		!exec_params(em, "UPDATE allot.workload SET adaptive_replication = true WHERE id = $1", 1, values))
		return false;
	if (w->app >= 0 && w->jobs > 0 &&
		!exec_params(em,
					 "INSERT INTO allot.job (workload_id, predicted_app_units)"
					 " SELECT $1, $2 FROM generate_series(1, $3::bigint)", 3, job_values))
		return false;
	em->wl_present[i] = true;
	em->wl_active[i] = true;
	em->wl_prio[i] = w->priority;
	em->wl_throughput[i] = w->throughput;
	return true;
}

/* Hosts through COPY: one text row each. */
static bool
copy_hosts(Emulator *em)
{
	PGresult   *res;
	char		row[512];
	bool		ok = true;
	bool		registered = false;	/* some group registered itself (allot 0.5.0 on) */

	for (int g = 0; g < em->scn.ngroups; g++)
		registered = registered || em->scn.groups[g].registered;
	res = PQexec(em->control, registered ?
				 "COPY allot.host (id, name, os, threads, physical_cores, sockets, cpu_flops, registered_at)"
				 " FROM STDIN" :
				 "COPY allot.host (id, name, os, threads, physical_cores, sockets, cpu_flops) FROM STDIN");
	if (PQresultStatus(res) != PGRES_COPY_IN)
	{
		fprintf(stderr, "COPY allot.host: %s", PQerrorMessage(em->control));
		PQclear(res);
		return false;
	}
	PQclear(res);
	for (int i = 0; i < em->nhosts && ok; i++)
	{
		Host	   *h = &em->hosts[i];
		int			n = snprintf(row, sizeof(row), "%lld\t%s-%lld\tLinux\t%d\t%d\t%d\t%.17g%s%s\n",
								 (long long) h->id, em->scn.groups[h->group].name, (long long) h->id,
								 h->threads, h->cores, h->sockets, h->res[0].instance_flops,
								 registered ? "\t" : "",
								 !registered ? "" :
								 em->scn.groups[h->group].registered ? "2026-01-01 00:00:00+00" : "\\N");

		ok = PQputCopyData(em->control, row, n) == 1;
	}
	if (PQputCopyEnd(em->control, ok ? NULL : "failed") != 1)
		ok = false;
	res = PQgetResult(em->control);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		fprintf(stderr, "COPY allot.host: %s", PQerrorMessage(em->control));
		ok = false;
	}
	PQclear(res);
	while ((res = PQgetResult(em->control)) != NULL)
		PQclear(res);
	return ok;
}

/* Build the hosts in memory: shapes drawn per host from the seed. */
static bool
build_hosts(Emulator *em)
{
	Scenario   *s = &em->scn;
	int			n = 0;

	for (int g = 0; g < s->ngroups; g++)
		n += s->groups[g].count;
	em->nhosts = n;
	em->hosts = calloc((size_t) (n > 0 ? n : 1), sizeof(Host));
	em->heap = calloc((size_t) (n > 0 ? n : 1), sizeof(Host *));
	if (em->hosts == NULL || em->heap == NULL)
		return false;
	(void) resource_index(em, "cpu");
	n = 0;
	for (int g = 0; g < s->ngroups; g++)
	{
		const ScnHostGroup *grp = &s->groups[g];

		for (int k = 0; k < grp->count; k++, n++)
		{
			Host	   *h = &em->hosts[n];
			Rng			rng = rng_stream(s->seed, RNG_HOST_SHAPE, (uint64_t) n + 1);

			h->id = n + 1;
			h->group = g;
			h->conn = (int) (h->id % s->connections);
			h->threads = grp->cpus[(int) (rng_uniform(&rng) * grp->nchoices)];
			h->cores = grp->hyperthreaded && h->threads > 1 ? h->threads / 2 : h->threads;
			h->sockets = grp->sockets < h->threads ? grp->sockets : h->threads;
			h->nres = 1;
			h->res[0].global = 0;
			h->res[0].n = h->threads;
			h->res[0].instance_flops = grp->cpu_flops;
			if (s->job_farm && grp->gpus > 0)
			{
				h->nres = 2;
				h->res[1].global = resource_index(em, grp->gpu_type);
				h->res[1].n = grp->gpus;
				h->res[1].instance_flops = grp->gpu_flops;
			}
			for (int r = 0; r < h->nres; r++)
				h->res[r].run_workload = -1;
			h->workload = -1;
			h->assigned = -1;
			h->run_workload = -1;
			h->last_request = -INFINITY;
			h->jitter = rng_stream(s->seed, RNG_ASSIGN, (uint64_t) h->id);
			host_init_availability(em, h);
		}
	}
	return true;
}

/* Coprocessors: a group's hosts have consecutive ids. */
static bool
copy_coprocs(Emulator *em)
{
	long		first = 0;

	for (int g = 0; g < em->scn.ngroups; g++)
	{
		const ScnHostGroup *grp = &em->scn.groups[g];
		char		lo[24], hi[24], count[16], flops[32];
		const char *values[5] = {lo, hi, grp->gpu_type, count, flops};

		snprintf(lo, sizeof(lo), "%ld", first + 1);
		snprintf(hi, sizeof(hi), "%ld", first + grp->count);
		snprintf(count, sizeof(count), "%d", grp->gpus);
		snprintf(flops, sizeof(flops), "%.17g", grp->gpu_flops);
		first += grp->count;
		if (!em->scn.job_farm || grp->gpus == 0 || grp->count == 0)
			continue;
		if (!exec_params(em,
						 "WITH r AS (INSERT INTO allot.resource (name) VALUES ($3) ON CONFLICT DO NOTHING) "
						 "INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)"
						 " SELECT g, $3, $4, $5 FROM generate_series($1::bigint, $2::bigint) g",
						 5, values))
			return false;
	}
	return true;
}

bool
farm_create(Emulator *em)
{
	Scenario   *s = &em->scn;
	PGresult   *res;
	int			max_id = 0;
	const char *balance = scenario_setting(s, "allot.balance_engine_throughputs");

	em->balance = balance && (!strcasecmp(balance, "on") || !strcasecmp(balance, "true") ||
							  !strcasecmp(balance, "yes") || !strcmp(balance, "1"));
	res = control_query(em, "SELECT (SELECT count(*) FROM allot.host) + (SELECT count(*) FROM allot.workload)", 0, NULL);
	if (res == NULL)
		return false;
	if (strcmp(PQgetvalue(res, 0, 0), "0") != 0)
	{
		fprintf(stderr, "this database already holds hosts or workloads: use an empty one\n");
		PQclear(res);
		return false;
	}
	PQclear(res);

	/* Version id -> app and index, for every version including later ones. */
	for (int a = 0; a < s->napps; a++)
		for (int v = 0; v < s->apps[a].nversions; v++)
			max_id = s->apps[a].versions[v].id > max_id ? s->apps[a].versions[v].id : max_id;
	for (int e = 0; e < s->nevents; e++)
		if (s->events[e].kind == EV_VERSION && s->events[e].version.id > max_id)
			max_id = s->events[e].version.id;
	em->max_version_id = max_id;
	em->version_app = malloc(sizeof(int) * (size_t) (max_id + 1));
	em->version_idx = malloc(sizeof(int) * (size_t) (max_id + 1));
	if (em->version_app == NULL || em->version_idx == NULL)
		return false;
	for (int i = 0; i <= max_id; i++)
		em->version_app[i] = em->version_idx[i] = -1;

	if (!build_hosts(em) || !control_exec(em, "BEGIN"))
		return false;
	for (int a = 0; a < s->napps; a++)
	{
		char		id[16];
		const char *values[2] = {id, s->apps[a].name};

		snprintf(id, sizeof(id), "%d", a + 1);
		if (!exec_params(em, "INSERT INTO allot.app (id, name) VALUES ($1, $2)", 2, values))
			return false;
		for (int v = 0; v < s->apps[a].nversions; v++)
		{
			if (!insert_version(em, a, &s->apps[a].versions[v]))
				return false;
			em->version_app[s->apps[a].versions[v].id] = a;
			em->version_idx[s->apps[a].versions[v].id] = v;
		}
	}
	for (int i = 0; i < s->nworkloads; i++)
		if (s->workloads[i].start <= 0 && !insert_workload(em, i))
			return false;
	if (!copy_hosts(em) || !copy_coprocs(em))
		return false;
	if (!control_exec(em, "COMMIT") || !control_exec(em, "ANALYZE"))
		return false;
	return true;
}

/* Apply the events due by now: workloads that start, and [events] lines. */
bool
apply_events(Emulator *em, double now)
{
	Scenario   *s = &em->scn;

	for (int i = 0; i < s->nworkloads; i++)
		if (!em->wl_present[i] && s->workloads[i].start <= now && !insert_workload(em, i))
			return false;
	for (int e = 0; e < s->nevents; e++)
	{
		ScnEvent   *ev = &s->events[e];
		char		id[16], value[32];
		const char *values[2] = {id, value};

		if (ev->done || ev->at > now)
			continue;
		ev->done = true;
		snprintf(id, sizeof(id), "%d", ev->target + 1);
		switch (ev->kind)
		{
			case EV_PRIORITY:
				snprintf(value, sizeof(value), "%d", (int) ev->value);
				em->wl_prio[ev->target] = (int) ev->value;
				if (!exec_params(em, "UPDATE allot.workload SET priority = $2 WHERE id = $1", 2, values))
					return false;
				break;
			case EV_THROUGHPUT:
				snprintf(value, sizeof(value), "%.17g", ev->value);
				em->wl_throughput[ev->target] = ev->value;
				if (!exec_params(em, "UPDATE allot.workload SET throughput = $2 WHERE id = $1", 2, values))
					return false;
				break;
			case EV_STATE:
				snprintf(value, sizeof(value), "%s", ev->state);
				em->wl_active[ev->target] = !strcmp(ev->state, "active");
				if (!exec_params(em, "UPDATE allot.workload SET state = $2 WHERE id = $1", 2, values))
					return false;
				break;
			case EV_VERSION:
				if (!insert_version(em, ev->target, &ev->version))
					return false;
				{
					ScnApp	   *app = &s->apps[ev->target];

					if (app->nversions == MAX_VERSIONS)
					{
						fprintf(stderr, "app %s: too many versions\n", app->name);
						return false;
					}
					app->versions[app->nversions] = ev->version;
					em->version_app[ev->version.id] = ev->target;
					em->version_idx[ev->version.id] = app->nversions++;
				}
				break;
		}
	}
	return true;
}

/* At the end of bucket b: which workloads are active and have work, with
 * their priority and throughput then (for the fair shares). */
bool
sample_bucket(Emulator *em, int b)
{
	int			nw = em->scn.nworkloads;
	bool		has_jobs[MAX_WORKLOADS] = {false};

	if (b < 0 || b >= em->m.nbuckets)
		return true;
	if (em->scn.job_farm)
	{
		PGresult   *res = control_query(em,
										"SELECT workload_id FROM allot.job_usage WHERE unsent + in_progress > 0",
										0, NULL);

		if (res == NULL)
			return false;
		for (int i = 0; i < PQntuples(res); i++)
		{
			long		id = atol(PQgetvalue(res, i, 0));

			if (id >= 1 && id <= nw)
				has_jobs[id - 1] = true;
		}
		PQclear(res);
	}
	for (int w = 0; w < nw; w++)
	{
		size_t		k = (size_t) b * (size_t) nw + (size_t) w;

		em->m.had_work[k] = em->wl_present[w] && em->wl_active[w] &&
			(!em->scn.job_farm || has_jobs[w]);
		em->m.prio[k] = em->wl_prio[w];
		em->m.throughput[k] = em->wl_throughput[w];
	}
	return true;
}

/* One round of the transitioner, repeated while a step filled its batch. */
bool
run_transitioner(Emulator *em, double now)
{
	char		t[32];
	const char *values[1] = {t};

	snprintf(t, sizeof(t), "%.6f", VIRTUAL_EPOCH + now);
	for (int round = 0; round < 100; round++)
	{
		PGresult   *res = control_query(em,
										"SELECT greatest((r->>'timed_out')::bigint, (r->>'reports_read')::bigint,"
										" (r->>'credited')::bigint, (r->>'expired_assignments')::bigint)"
										" >= current_setting('allot.transitioner_batch')::bigint"
										" FROM allot.run_transitioner(to_timestamp($1::float8)) r",
										1, values);
		bool		again;

		if (res == NULL)
			return false;
		again = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		PQclear(res);
		em->m.transitioner_calls++;
		if (!again)
			break;
	}
	em->last_transitioner = now;
	return true;
}

/*
 * What every farm does after a tick's requests: run the transitioner when
 * its interval is up, sample the buckets that ended, show progress.
 */
bool
end_of_tick(Emulator *em, double t, double *next_transitioner, int *bucket)
{
	const Scenario *s = &em->scn;

	if (t >= *next_transitioner)
	{
		if (!run_transitioner(em, t))
			return false;
		*next_transitioner += s->transitioner_interval;
	}
	while (t >= (*bucket + 1) * s->bucket - EPS && *bucket < em->m.nbuckets)
	{
		if (!sample_bucket(em, *bucket))
			return false;
		(*bucket)++;
	}
	progress(em, t, false);
	return true;
}

/* The next scenario event or workload arrival still to come; INFINITY: none. */
double
next_event_at(const Emulator *em)
{
	const Scenario *s = &em->scn;
	double		next = INFINITY;

	for (int e = 0; e < s->nevents; e++)
		if (!s->events[e].done && s->events[e].at < next)
			next = s->events[e].at;
	for (int w = 0; w < s->nworkloads; w++)
		if (!em->wl_present[w] && s->workloads[w].start < next)
			next = s->workloads[w].start;
	return next;
}
