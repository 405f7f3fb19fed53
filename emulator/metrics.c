/*
 * metrics.c: what a run measured, and how it is reported.
 *
 * The formulas are those of emulator/README.md, "Metrics".  Everything is
 * measured over [measure_from, length] except the per-bucket series, which
 * cover the whole run, and the per-workload counts of what allot accepted,
 * which cover the whole run so that they can be checked against allot's
 * tables.
 */
#include "emulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double
wall_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

bool
metrics_init(Emulator *em)
{
	Metrics    *m = &em->m;
	size_t		n;

	m->nbuckets = (int) ceil(em->scn.length / em->scn.bucket - 1e-9);
	if (m->nbuckets < 1)
		m->nbuckets = 1;
	n = (size_t) m->nbuckets * (size_t) em->scn.nworkloads;
	m->work = calloc(n, sizeof(double));
	m->fair = calloc(n, sizeof(double));
	m->had_work = calloc(n, sizeof(bool));
	m->prio = calloc(n, sizeof(int));
	m->throughput = calloc(n, sizeof(double));
	return m->work && m->fair && m->had_work && m->prio && m->throughput;
}

double
overlap_measured(const Emulator *em, double t1, double t2)
{
	double		lo = t1 > em->scn.measure_from ? t1 : em->scn.measure_from;
	double		hi = t2 < em->scn.length ? t2 : em->scn.length;

	return hi > lo ? hi - lo : 0;
}

/* Work done at `rate` per second over [t1, t2], spread over the buckets. */
void
metrics_work(Emulator *em, int workload, double rate, double t1, double t2)
{
	Metrics    *m = &em->m;
	double		len = em->scn.bucket;
	int			b = (int) floor(t1 / len);

	if (t2 > em->scn.length)
		t2 = em->scn.length;
	for (; b < m->nbuckets && b * len < t2; b++)
	{
		double		lo = fmax(t1, b * len);
		double		hi = fmin(t2, (b + 1) * len);

		if (hi > lo)
			m->work[(size_t) b * (size_t) em->scn.nworkloads + (size_t) workload] += rate * (hi - lo);
	}
}

void
metrics_busy(Emulator *em, int workload, int global_res, double instances, double t1, double t2)
{
	double		x = instances * overlap_measured(em, t1, t2);

	em->m.busy[global_res] += x;
	em->m.busy_by[workload][global_res] += x;
}

void
metrics_avail(Emulator *em, int global_res, double instances, double t1, double t2)
{
	em->m.avail[global_res] += instances * overlap_measured(em, t1, t2);
}

/* A run [start, end] of one workload on a host resource; it counts if it
 * ends in the measured period, with its whole length. */
void
metrics_run(Emulator *em, double start, double end, bool switched)
{
	double		len = end - start;

	if (end < em->scn.measure_from || len <= 0)
		return;
	em->m.run_sum += len;
	em->m.run_sum_sq += len * len;
	em->m.runs++;
	if (switched)
		em->m.switches++;
}

/*
 * Fair shares per bucket: among the workloads eligible in the bucket (active
 * with work at its end, or that did work in it), those of the highest
 * priority share in proportion to their throughput; with engine balancing
 * on, a throughput is first divided by the number of such workloads of the
 * same engine (seed 000 step 3).
 */
void
metrics_fair_shares(Emulator *em)
{
	Metrics    *m = &em->m;
	int			nw = em->scn.nworkloads;

	for (int b = 0; b < m->nbuckets; b++)
	{
		size_t		base = (size_t) b * (size_t) nw;
		bool		elig[MAX_WORKLOADS];
		double		eff[MAX_WORKLOADS];
		int			top = 0;
		bool		any = false;
		double		sum = 0;

		for (int w = 0; w < nw; w++)
		{
			elig[w] = m->had_work[base + w] || m->work[base + w] > 0;
			if (elig[w] && (!any || m->prio[base + w] > top))
				top = m->prio[base + w];
			any = any || elig[w];
		}
		for (int w = 0; w < nw; w++)
			elig[w] = elig[w] && m->prio[base + w] == top;
		for (int w = 0; w < nw; w++)
		{
			int			same = 0;

			eff[w] = 0;
			if (!elig[w])
				continue;
			for (int x = 0; x < nw; x++)
				same += elig[x] && !strcmp(em->scn.workloads[x].engine, em->scn.workloads[w].engine);
			eff[w] = m->throughput[base + w] / (em->balance ? same : 1);
			sum += eff[w];
		}
		for (int w = 0; w < nw; w++)
			m->fair[base + w] = sum > 0 ? eff[w] / sum : 0;
	}
}

/* ---------------------------------------------------------------------------
 * The summary.
 */
typedef struct Summary
{
	double		idle[MAX_RESOURCES];
	double		wasted;
	double		violation;
	double		monotony_h;
	double		mean_run_h;
	double		switches_per_host_day;
	double		requests_per_job;
	double		requests_per_host_hour;
	double		share[MAX_WORKLOADS];
	double		fair[MAX_WORKLOADS];
	double		work_total;
} Summary;

static bool
bucket_measured(const Emulator *em, int b)
{
	return b * em->scn.bucket >= em->scn.measure_from - EPS;
}

static void
summarize(Emulator *em, Summary *s)
{
	Metrics    *m = &em->m;
	int			nw = em->scn.nworkloads;
	double		weighted_tv = 0;
	double		measured_secs = em->scn.length - em->scn.measure_from;

	memset(s, 0, sizeof(*s));
	for (int r = 0; r < em->nresources; r++)
		/* fmax: busy can exceed available only by rounding */
		s->idle[r] = m->avail[r] > 0 ? fmax(0, 1 - m->busy[r] / m->avail[r]) : NAN;
	s->wasted = m->flops_completed > 0 ? m->flops_late / m->flops_completed : NAN;
	for (int b = 0; b < m->nbuckets; b++)
	{
		size_t		base = (size_t) b * (size_t) nw;
		double		total = 0,
					tv = 0;

		if (!bucket_measured(em, b))
			continue;
		for (int w = 0; w < nw; w++)
			total += m->work[base + w];
		if (total <= 0)
			continue;
		for (int w = 0; w < nw; w++)
		{
			tv += fabs(m->work[base + w] / total - m->fair[base + w]);
			s->share[w] += m->work[base + w];
			s->fair[w] += total * m->fair[base + w];
		}
		weighted_tv += total * tv / 2;
		s->work_total += total;
	}
	for (int w = 0; w < nw; w++)
		if (s->work_total > 0)
		{
			s->share[w] /= s->work_total;
			s->fair[w] /= s->work_total;
		}
	s->violation = s->work_total > 0 ? weighted_tv / s->work_total : NAN;
	s->monotony_h = m->run_sum > 0 ? m->run_sum_sq / m->run_sum / 3600 : NAN;
	s->mean_run_h = m->runs > 0 ? m->run_sum / m->runs / 3600 : NAN;
	s->switches_per_host_day = em->nhosts > 0 && measured_secs > 0
		? m->switches / (em->nhosts * measured_secs / 86400) : NAN;
	s->requests_per_job = m->jobs_completed > 0 ? (double) m->requests / m->jobs_completed : NAN;
	s->requests_per_host_hour = em->nhosts > 0 && measured_secs > 0
		? m->requests / (em->nhosts * measured_secs / 3600) : NAN;
}

/*
 * allot 0.7.0's replication, read from its tables at the end of the run:
 * the replicas among the results done (the share of the work spent on
 * checking, adaptive replication's overhead), and how fast hosts became
 * reliable (from their first sending to allot.reliable_after consecutive
 * valid results).  Empty before 0.7.0, or on an assignment farm.
 */
static void
replication_summary(Emulator *em, char *out, size_t len)
{
	PGresult   *res;

	out[0] = '\0';
	if (!em->voices)
		return;
	res = control_query(em,
						"WITH done AS (SELECT count(*) FILTER (WHERE replica_of IS NOT NULL) AS replicas,"
						"                     count(*) AS results FROM allot.job WHERE state = 'done'),"
						" first AS (SELECT host_id, min(sent_at) AS sent FROM allot.job_report GROUP BY host_id),"
						" took AS (SELECT extract(epoch FROM r.reliable_at - f.sent)::float8 / 3600 AS hours"
						"            FROM first f LEFT JOIN allot.host_reliability r ON r.host_id = f.host_id)"
						"SELECT d.replicas, d.results, (SELECT count(*) FROM took),"
						"       (SELECT count(hours) FROM took),"
						"       coalesce((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY hours) FROM took), 0),"
						"       coalesce((SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY hours) FROM took), 0)"
						"  FROM done d", 0, NULL);
	if (res == NULL)
		return;
	{
		long		replicas = atol(PQgetvalue(res, 0, 0));
		long		results = atol(PQgetvalue(res, 0, 1));
		long		hosts = atol(PQgetvalue(res, 0, 2));
		long		reliable = atol(PQgetvalue(res, 0, 3));

		em->replication_overhead = results > 0 ? (double) replicas / results : 0;
		em->reliable_share = hosts > 0 ? (double) reliable / hosts : 0;
		em->reliable_median_h = atof(PQgetvalue(res, 0, 4));

		snprintf(out, len,
				 "%-32s %.4f   (%ld replicas of %ld results done)\n"
				 "%-32s %.4f   (%ld of %ld hosts that were sent work)\n"
				 "%-32s %.2f h median, %.2f h p90   (first sending to reliable)\n",
				 "replication overhead", results > 0 ? (double) replicas / results : 0, replicas, results,
				 "hosts reliable at the end", hosts > 0 ? (double) reliable / hosts : 0, reliable, hosts,
				 "time to reliable", atof(PQgetvalue(res, 0, 4)), atof(PQgetvalue(res, 0, 5)));
	}
	PQclear(res);
}

static void
print_summary(Emulator *em, const Summary *s, FILE *f, const char *consistency)
{
	const Scenario *scn = &em->scn;
	const Metrics *m = &em->m;
	const char *fairness = scenario_setting(scn, "allot.fairness");
	int			nw = scn->nworkloads;
	double		days = scn->length / 86400;

	fprintf(f, "scenario %s: %s farm, %d hosts, %.4g virtual days, fairness %s, seed %llu\n",
			scn->name, scn->job_farm ? "job" : "assignment", em->nhosts, days,
			fairness ? fairness : "current (default)", (unsigned long long) scn->seed);
	fprintf(f, "wall time %.1f s (set-up %.1f s, run %.1f s): %ld SQL calls, %.0f calls/s, %.0f %s/s\n",
			em->wall_setup + em->wall_run, em->wall_setup, em->wall_run, m->calls_all,
			em->wall_run > 0 ? m->calls_all / em->wall_run : 0,
			em->wall_run > 0 ? m->requests_all / em->wall_run : 0,
			scn->job_farm ? "request_work" : "assign_workload");
	fprintf(f, "measured from %.4g h to %.4g h\n\n", scn->measure_from / 3600, scn->length / 3600);
	fprintf(f, "%-32s %s\n", "metric", "value");
	for (int r = 0; r < em->nresources; r++)
		if (!isnan(s->idle[r]))
		{
			char		label[NAME_LEN + 32];

			snprintf(label, sizeof(label), "idle fraction, %s",
					 scn->job_farm ? em->resources[r] : "threads");
			fprintf(f, "%-32s %.4f\n", label, s->idle[r]);
		}
	if (scn->job_farm)
	{
		fprintf(f, "%-32s %.4f   (%ld of %ld jobs late, %ld dropped unstarted)\n", "wasted fraction",
				s->wasted, m->jobs_late, m->jobs_completed, m->jobs_dropped);
	}
	fprintf(f, "%-32s %.4f\n", "share violation", s->violation);
	fprintf(f, "%-32s %.2f h   (mean run %.2f h, %.2f switches per host-day)\n",
			"monotony", s->monotony_h, s->mean_run_h, s->switches_per_host_day);
	if (scn->job_farm)
		fprintf(f, "%-32s %.4f   (%ld request_work calls, %ld jobs completed)\n", "requests per job",
				s->requests_per_job, m->requests, m->jobs_completed);
	fprintf(f, "%-32s %.4f\n", "requests per host-hour", s->requests_per_host_hour);
	if (scn->job_farm)
		fputs(em->replication, f);
	if (consistency)
		fprintf(f, "%-32s %s\n", "consistency with allot", consistency);

	fprintf(f, "\n%3s  %-20s %10s %5s %10s %8s %8s", "id", "workload", "throughput", "prio",
			scn->job_farm ? "jobs done" : "", "share %", "fair %");
	if (scn->job_farm)
		for (int r = 0; r < em->nresources; r++)
			fprintf(f, " %7.7s %%", em->resources[r]);
	fputc('\n', f);
	for (int w = 0; w < nw; w++)
	{
		char		done[24] = "";

		if (scn->job_farm)
			snprintf(done, sizeof(done), "%ld", m->done_jobs[w]);
		fprintf(f, "%3d  %-20.20s %10.6g %5d %10s %8.2f %8.2f", w + 1, scn->workloads[w].name,
				em->wl_throughput[w], em->wl_prio[w], done, 100 * s->share[w], 100 * s->fair[w]);
		/* its share of each resource's busy instance-time (seed 003's targets) */
		if (scn->job_farm)
			for (int r = 0; r < em->nresources; r++)
				fprintf(f, " %9.2f", m->busy[r] > 0 ? 100 * m->busy_by[w][r] / m->busy[r] : 0);
		fputc('\n', f);
	}

	/* Shares over time, in at most 12 periods of whole buckets. */
	{
		int			per = (m->nbuckets + 11) / 12;
		bool		in_days = scn->length > 3 * 86400;

		fprintf(f, "\nshare %% (fair %%) over time\n%10s", in_days ? "from day" : "from hour");
		for (int w = 0; w < nw; w++)
			fprintf(f, " %14.14s", scn->workloads[w].name);
		fputc('\n', f);
		for (int b0 = 0; b0 < m->nbuckets; b0 += per)
		{
			double		work[MAX_WORKLOADS] = {0},
						fair[MAX_WORKLOADS] = {0},
						total = 0;

			for (int b = b0; b < b0 + per && b < m->nbuckets; b++)
			{
				double		bt = 0;

				for (int w = 0; w < nw; w++)
					bt += m->work[(size_t) b * nw + w];
				for (int w = 0; w < nw; w++)
				{
					work[w] += m->work[(size_t) b * nw + w];
					fair[w] += bt * m->fair[(size_t) b * nw + w];
				}
				total += bt;
			}
			fprintf(f, "%10.4g", b0 * scn->bucket / (in_days ? 86400 : 3600));
			for (int w = 0; w < nw; w++)
			{
				char		cell[32];

				if (total > 0)
					snprintf(cell, sizeof(cell), "%.1f (%.1f)", 100 * work[w] / total, 100 * fair[w] / total);
				else
					snprintf(cell, sizeof(cell), "-");
				fprintf(f, " %14s", cell);
			}
			fputc('\n', f);
		}
	}
}

static FILE *
open_out(Emulator *em, const char *name, char *path, size_t len)
{
	FILE	   *f;

	snprintf(path, len, "%s/%s", em->outdir, name);
	f = fopen(path, "w");
	if (f == NULL)
		perror(path);
	return f;
}

static bool
write_csvs(Emulator *em, const Summary *s, bool consistent)
{
	const Scenario *scn = &em->scn;
	const Metrics *m = &em->m;
	int			nw = scn->nworkloads;
	char		path[4096];
	FILE	   *f;

	/* shares.csv: the series */
	if ((f = open_out(em, "shares.csv", path, sizeof(path))) == NULL)
		return false;
	fprintf(f, "bucket,start_hours,workload_id,workload,share,fair,work\n");
	for (int b = 0; b < m->nbuckets; b++)
	{
		double		total = 0;

		for (int w = 0; w < nw; w++)
			total += m->work[(size_t) b * nw + w];
		for (int w = 0; w < nw; w++)
		{
			double		work = m->work[(size_t) b * nw + w];

			fprintf(f, "%d,%.6g,%d,%s,%.6f,%.6f,%.6g\n", b, b * scn->bucket / 3600, w + 1,
					scn->workloads[w].name, total > 0 ? work / total : 0,
					m->fair[(size_t) b * nw + w], work);
		}
	}
	fclose(f);

	/* metrics.csv: one metric per line */
	if ((f = open_out(em, "metrics.csv", path, sizeof(path))) == NULL)
		return false;
	fprintf(f, "metric,value\n");
	fprintf(f, "kind,%s\nhosts,%d\nlength_hours,%.6g\nmeasure_from_hours,%.6g\n",
			scn->job_farm ? "job" : "assignment", em->nhosts, scn->length / 3600,
			scn->measure_from / 3600);
	for (int r = 0; r < em->nresources; r++)
		if (!isnan(s->idle[r]))
			fprintf(f, "idle_%s,%.9g\n", scn->job_farm ? em->resources[r] : "threads", s->idle[r]);
	fprintf(f, "wasted,%.9g\nshare_violation,%.9g\nmonotony_hours,%.9g\nmean_run_hours,%.9g\n",
			s->wasted, s->violation, s->monotony_h, s->mean_run_h);
	fprintf(f, "switches_per_host_day,%.9g\nrequests,%ld\njobs_completed,%ld\njobs_late,%ld\n",
			s->switches_per_host_day, m->requests, m->jobs_completed, m->jobs_late);
	fprintf(f, "jobs_dropped,%ld\nrequests_per_job,%.9g\nrequests_per_host_hour,%.9g\n",
			m->jobs_dropped, s->requests_per_job, s->requests_per_host_hour);
	fprintf(f, "reports,%ld\nreports_refused,%ld\ntransitioner_calls,%ld\ncalls,%ld\n",
			m->reports_all, m->reports_refused, m->transitioner_calls, m->calls_all);
	fprintf(f, "setup_seconds,%.3f\nrun_seconds,%.3f\ncalls_per_second,%.1f\nrequests_per_second,%.1f\n",
			em->wall_setup, em->wall_run, em->wall_run > 0 ? m->calls_all / em->wall_run : 0,
			em->wall_run > 0 ? m->requests_all / em->wall_run : 0);
	if (em->voices && scn->job_farm)
		fprintf(f, "replication_overhead,%.6f\nhosts_reliable,%.6f\ntime_to_reliable_median_hours,%.4f\n",
				em->replication_overhead, em->reliable_share, em->reliable_median_h);
	fprintf(f, "consistent,%d\n", consistent ? 1 : 0);
	fclose(f);

	/* workloads.csv: measured shares, and what allot accepted (whole run) */
	if ((f = open_out(em, "workloads.csv", path, sizeof(path))) == NULL)
		return false;
	fprintf(f, "workload_id,workload,throughput,priority,share,fair,done_jobs,done_app_units,done_flops");
	for (int r = 0; r < em->nresources; r++)
		fprintf(f, ",share_of_%s", scn->job_farm ? em->resources[r] : "threads");
	fputc('\n', f);
	for (int w = 0; w < nw; w++)
	{
		fprintf(f, "%d,%s,%.17g,%d,%.6f,%.6f,%ld,%.17g,%.17g", w + 1, scn->workloads[w].name,
				em->wl_throughput[w], em->wl_prio[w], s->share[w], s->fair[w], m->done_jobs[w],
				m->done_app_units[w], m->done_flops[w]);
		for (int r = 0; r < em->nresources; r++)
			fprintf(f, ",%.6f", m->busy[r] > 0 ? m->busy_by[w][r] / m->busy[r] : 0);
		fputc('\n', f);
	}
	fclose(f);
	return true;
}

bool
metrics_report(Emulator *em, bool consistent, const char *consistency)
{
	Summary		s;
	char		path[4096];
	FILE	   *f;

	metrics_fair_shares(em);
	summarize(em, &s);
	if (em->scn.job_farm)
		replication_summary(em, em->replication, sizeof(em->replication));
	print_summary(em, &s, stdout, consistency);
	if ((f = open_out(em, "summary.txt", path, sizeof(path))) == NULL)
		return false;
	print_summary(em, &s, f, consistency);
	fclose(f);
	if (!write_csvs(em, &s, consistent))
		return false;
	snprintf(path, sizeof(path), "%s/shares.svg", em->outdir);
	if (!chart_write(em, path))
		return false;
	printf("\nwritten: %s/{summary.txt,metrics.csv,workloads.csv,shares.csv,shares.svg}\n", em->outdir);
	return true;
}

/* The progress line on stderr: \r-updated on a terminal, else a line per
 * tenth of the run. */
void
progress(Emulator *em, double now, bool last)
{
	double		wall = wall_clock();
	double		pct = 100 * now / em->scn.length;
	double		elapsed = wall - em->wall_start;
	int			decile = (int) (pct / 10);
	long		day = (long) (now / 86400);
	long		secs = (long) fmod(now, 86400);

	if (em->quiet)
		return;
	if (em->progress_tty)
	{
		if (!last && wall - em->last_progress < 0.5)
			return;
		fprintf(stderr, "\r  virtual day %ld %02ld:%02ld  %5.1f%%  %6.0f requests/s  %6.0f calls/s ",
				day, secs / 3600, secs / 60 % 60, pct,
				elapsed > 0 ? em->m.requests_all / elapsed : 0,
				elapsed > 0 ? em->m.calls_all / elapsed : 0);
		if (last)
			fputc('\n', stderr);
	}
	else if (decile > em->progress_decile || last)
	{
		if (decile <= em->progress_decile && last)
			return;
		em->progress_decile = decile;
		fprintf(stderr, "  virtual day %ld %02ld:%02ld  %5.1f%%  %6.0f requests/s  %6.0f calls/s\n",
				day, secs / 3600, secs / 60 % 60, pct,
				elapsed > 0 ? em->m.requests_all / elapsed : 0,
				elapsed > 0 ? em->m.calls_all / elapsed : 0);
	}
	em->last_progress = wall;
}
