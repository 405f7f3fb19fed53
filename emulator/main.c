/*
 * main.c: allot-emulate, a fleet emulator for allot in virtual time.
 *
 * It reads a scenario, creates the farm in an empty database that has
 * allot, drives every host through allot's public SQL functions, and
 * reports the BOINC client emulator's metrics.  See README.md.
 */
#include "emulator.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
usage(FILE *f)
{
	fputs("usage: allot-emulate [options] SCENARIO\n"
		  "  -d CONNINFO    libpq connection string (default: the PG* environment)\n"
		  "  -o DIR         where to write the outputs (default: .)\n"
		  "  -c N           connections for the hosts' calls (overrides [run] connections)\n"
		  "  -S SEED        seed (overrides [run] seed)\n"
		  "  -L DURATION    run length (overrides [run] length), e.g. 1d\n"
		  "  -s NAME=VALUE  a setting to SET, as in [set]; repeatable\n"
		  "                 (e.g. -s allot.fairness=debt)\n"
		  "  -q             no progress line\n"
		  "The database must have allot and no hosts or workloads yet.\n", f);
}

/* Compare what the emulator believes with allot's tables. */
static bool
check_consistency(Emulator *em, char *msg, size_t len)
{
	PGresult   *res = control_query(em, "SELECT count(*) FROM allot.check_invariants()", 0, NULL);
	long		bad_invariants;
	long		mismatches = 0;

	if (res == NULL)
		return false;
	bad_invariants = atol(PQgetvalue(res, 0, 0));
	PQclear(res);
	if (em->scn.job_farm)
	{
		long		allot_done = 0,
					emu_done = 0;

		/* Every success report allot accepted is a done job, per workload. */
		res = control_query(em, "SELECT workload_id, count(*) FROM allot.job WHERE state = 'done' GROUP BY 1", 0, NULL);
		if (res == NULL)
			return false;
		for (int w = 0; w < em->scn.nworkloads; w++)
			emu_done += em->m.done_jobs[w];
		for (int i = 0; i < PQntuples(res); i++)
		{
			int			w = atoi(PQgetvalue(res, i, 0)) - 1;
			long		n = atol(PQgetvalue(res, i, 1));

			allot_done += n;
			if (w < 0 || w >= em->scn.nworkloads || em->m.done_jobs[w] != n)
				mismatches++;
		}
		PQclear(res);
		if (allot_done != emu_done)
			mismatches++;
		snprintf(msg, len, "%s (check_invariants: %ld lines; done jobs: allot %ld, emulator %ld)",
				 bad_invariants == 0 && mismatches == 0 ? "ok" : "MISMATCH",
				 bad_invariants, allot_done, emu_done);
	}
	else
	{
		long		rows,
					held = 0;

		/* Every host's assignment is the last one allot gave it. */
		res = control_query(em, "SELECT host_id, workload_id FROM allot.assignment", 0, NULL);
		if (res == NULL)
			return false;
		rows = PQntuples(res);
		for (int i = 0; i < rows; i++)
		{
			long		host = atol(PQgetvalue(res, i, 0));
			int			w = atoi(PQgetvalue(res, i, 1)) - 1;

			if (host < 1 || host > em->nhosts || em->hosts[host - 1].assigned != w)
				mismatches++;
		}
		PQclear(res);
		for (int i = 0; i < em->nhosts; i++)
			held += em->hosts[i].assigned >= 0;
		if (held != rows)
			mismatches++;
		snprintf(msg, len, "%s (check_invariants: %ld lines; assignments: allot %ld, emulator %ld, %ld differ)",
				 bad_invariants == 0 && mismatches == 0 ? "ok" : "MISMATCH",
				 bad_invariants, rows, held, mismatches);
	}
	return bad_invariants == 0 && mismatches == 0;
}

int
main(int argc, char **argv)
{
	static Emulator em;
	const char *sets[MAX_SETTINGS];
	int			nsets = 0;
	int			connections = 0;
	const char *seed = NULL;
	const char *length = NULL;
	int			opt;
	bool		ok;
	bool		consistent;
	char		consistency[256];

	em.conninfo = "";
	em.outdir = ".";
	while ((opt = getopt(argc, argv, "d:o:c:S:L:s:qh")) != -1)
	{
		switch (opt)
		{
			case 'd':
				em.conninfo = optarg;
				break;
			case 'o':
				em.outdir = optarg;
				break;
			case 'c':
				connections = atoi(optarg);
				break;
			case 'S':
				seed = optarg;
				break;
			case 'L':
				length = optarg;
				break;
			case 's':
				if (nsets == MAX_SETTINGS)
				{
					fprintf(stderr, "too many -s\n");
					return 2;
				}
				sets[nsets++] = optarg;
				break;
			case 'q':
				em.quiet = true;
				break;
			case 'h':
				usage(stdout);
				return 0;
			default:
				usage(stderr);
				return 2;
		}
	}
	if (optind != argc - 1)
	{
		usage(stderr);
		return 2;
	}
	if (!scenario_load(&em.scn, argv[optind]))
		return 2;
	for (int i = 0; i < nsets; i++)
		if (!scenario_set(&em.scn, sets[i]))
			return 2;
	if (connections < 0 || connections > 16)
	{
		fprintf(stderr, "-c: 1 to 16 connections\n");
		return 2;
	}
	if (connections > 0)
		em.scn.connections = connections;
	if (seed)
		em.scn.seed = strtoull(seed, NULL, 10);
	if (length && (!parse_duration(length, &em.scn.length) || em.scn.length <= em.scn.measure_from))
	{
		fprintf(stderr, "-L: a duration longer than measure_from, such as 1d\n");
		return 2;
	}
	em.progress_tty = isatty(STDERR_FILENO);
	em.progress_decile = 0;

	em.wall_start = wall_clock();
	if ((em.control = connect_db(em.conninfo)) == NULL ||
		!apply_settings(&em, em.control) || !metrics_init(&em) || !farm_create(&em))
		return 2;
	em.wall_setup = wall_clock() - em.wall_start;
	if (!pipeline_open(&em, em.scn.connections))
		return 2;
	em.wall_start = wall_clock();
	ok = em.scn.job_farm ? job_farm_run(&em) : assignment_farm_run(&em);
	em.wall_run = wall_clock() - em.wall_start;
	progress(&em, em.scn.length, true);
	pipeline_close(&em);
	if (!ok)
	{
		fprintf(stderr, "the run failed at virtual second %.0f\n", em.now);
		PQfinish(em.control);
		return 2;
	}
	consistent = check_consistency(&em, consistency, sizeof(consistency));
	ok = metrics_report(&em, consistent, consistency);
	PQfinish(em.control);
	if (!ok)
		return 2;
	return consistent ? 0 : 1;
}
