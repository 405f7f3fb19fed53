/*
 * A tiny BOINC app for the example project: it writes N numbered lines to
 * its output file "out" and finishes.  Built against Debian's
 * libboinc-app-dev (see Makefile).
 *
 *   lines [--lines N] [--wait-for PATH] [--extra-from PATH]
 *
 * --wait-for makes it wait (up to 120 s) until PATH exists before it
 * writes: the test uses it to act while a job is known to be running.
 * --extra-from copies PATH, when it exists, to the output before the
 * lines: a relative PATH is read from the client's slot directory, so a
 * test can make one client's output differ from another's (a host whose
 * results a quorum outvotes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <boinc/boinc_api.h>
#include <boinc/filesys.h>

int
main(int argc, char **argv)
{
	long		lines = 100;
	const char *wait_for = NULL;
	const char *extra_from = NULL;
	char		path[1024];
	FILE	   *out;
	int			rc;

	rc = boinc_init();
	if (rc)
	{
		fprintf(stderr, "boinc_init failed: %d\n", rc);
		exit(rc);
	}
	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--lines") == 0 && i + 1 < argc)
			lines = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--wait-for") == 0 && i + 1 < argc)
			wait_for = argv[++i];
		else if (strcmp(argv[i], "--extra-from") == 0 && i + 1 < argc)
			extra_from = argv[++i];
	}
	if (lines < 0 || lines > 10000000)
	{
		fprintf(stderr, "--lines must be between 0 and 10000000, not %ld\n", lines);
		boinc_finish(1);
	}
	for (int waited = 0; wait_for != NULL && access(wait_for, F_OK) != 0; waited++)
	{
		if (waited >= 1200)
		{
			fprintf(stderr, "%s did not appear in 120 s\n", wait_for);
			boinc_finish(2);
		}
		usleep(100 * 1000);
	}

	boinc_resolve_filename("out", path, sizeof(path));
	out = boinc_fopen(path, "w");
	if (out == NULL)
	{
		fprintf(stderr, "cannot open %s\n", path);
		boinc_finish(3);
	}
	if (extra_from != NULL)
	{
		FILE	   *extra = fopen(extra_from, "r");
		int			c;

		while (extra != NULL && (c = fgetc(extra)) != EOF)
			fputc(c, out);
		if (extra != NULL)
			fclose(extra);
	}
	for (long i = 1; i <= lines; i++)
		fprintf(out, "line %ld of %ld\n", i, lines);
	if (fclose(out) != 0)
	{
		fprintf(stderr, "cannot write %s\n", path);
		boinc_finish(4);
	}
	fprintf(stderr, "wrote %ld lines\n", lines);
	boinc_fraction_done(1.0);
	boinc_finish(0);
	return 0;					/* not reached */
}
