/*
 * scenario.c: the scenario file parser.  See README.md for the format: INI
 * sections ([run], [set], [app NAME], [workload NAME], [hosts NAME],
 * [events]) of "key = value" lines; event lines are "AT KIND TARGET ARGS".
 */
#include "scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum
{
	SEC_NONE, SEC_RUN, SEC_SET, SEC_APP, SEC_WORKLOAD, SEC_HOSTS, SEC_EVENTS
} Section;

typedef struct Parser
{
	Scenario   *scn;
	const char *path;
	int			line;
	Section		section;
	int			next_version_id;
} Parser;

static bool
fail(Parser *p, const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "%s:%d: ", p->path, p->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return false;
}

static char *
trim(char *s)
{
	char	   *end;

	while (isspace((unsigned char) *s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char) end[-1]))
		*--end = '\0';
	return s;
}

static bool
parse_number(const char *text, double *out)
{
	char	   *end;

	errno = 0;
	*out = strtod(text, &end);
	return end != text && *trim(end) == '\0' && errno == 0 && isfinite(*out);
}

bool
parse_duration(const char *text, double *secs)
{
	char	   *end;
	double		v;
	double		unit = 1;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || errno != 0 || !isfinite(v) || v < 0)
		return false;
	switch (*end)
	{
		case '\0':
		case 's':
			break;
		case 'm':
			unit = 60;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'd':
			unit = 86400;
			break;
		case 'w':
			unit = 7 * 86400;
			break;
		case 'y':
			unit = 365 * 86400;
			break;
		default:
			return false;
	}
	if (*end != '\0' && end[1] != '\0')
		return false;
	*secs = v * unit;
	return true;
}

static bool
parse_bool(const char *text, bool *out)
{
	if (!strcasecmp(text, "yes") || !strcasecmp(text, "on") || !strcasecmp(text, "true"))
		*out = true;
	else if (!strcasecmp(text, "no") || !strcasecmp(text, "off") || !strcasecmp(text, "false"))
		*out = false;
	else
		return false;
	return true;
}

double
dist_mean(const Dist *d)
{
	switch (d->kind)
	{
		case DIST_UNIFORM:
			return (d->a + d->b) / 2;
		default:
			return d->a;		/* fixed, and lognormal is given by its mean */
	}
}

static bool
parse_dist(Parser *p, char *text, Dist *d)
{
	char		kind[32];
	int			n;

	n = sscanf(text, "%31s %lf %lf", kind, &d->a, &d->b);
	if (n >= 2 && !strcmp(kind, "fixed"))
		d->kind = DIST_FIXED;
	else if (n == 3 && !strcmp(kind, "uniform") && d->a > 0 && d->b >= d->a)
		d->kind = DIST_UNIFORM;
	else if (n == 3 && !strcmp(kind, "lognormal") && d->b >= 0)
		d->kind = DIST_LOGNORMAL;
	else if (n == 1 && parse_number(kind, &d->a))
		d->kind = DIST_FIXED;
	else
		return fail(p, "app_units: expected \"fixed A\", \"uniform A B\" or \"lognormal MEAN SIGMA\", not \"%s\"", text);
	if (d->a <= 0)
		return fail(p, "app_units must be positive");
	return true;
}

/* "nvidia ncpus=0.2 ncoprocs=1 efficiency=0.5" */
static bool
parse_version(Parser *p, char *text, ScnVersion *v)
{
	char	   *tok;
	char	   *save = NULL;

	memset(v, 0, sizeof(*v));
	tok = strtok_r(text, " \t", &save);
	if (tok == NULL || strlen(tok) >= NAME_LEN)
		return fail(p, "version: expected a resource name first");
	strcpy(v->resource, tok);
	v->ncpus = strcmp(tok, "cpu") == 0 ? 1 : 0;
	v->ncoprocs = strcmp(tok, "cpu") == 0 ? 0 : 1;
	v->efficiency = 1;
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL)
	{
		char	   *eq = strchr(tok, '=');
		double		x;

		if (eq == NULL || !parse_number(eq + 1, &x) || x < 0)
			return fail(p, "version: expected key=number, not \"%s\"", tok);
		*eq = '\0';
		if (!strcmp(tok, "ncpus"))
			v->ncpus = x;
		else if (!strcmp(tok, "ncoprocs"))
			v->ncoprocs = x;
		else if (!strcmp(tok, "efficiency") && x > 0)
			v->efficiency = x;
		else
			return fail(p, "version: unknown or bad attribute \"%s\"", tok);
	}
	v->id = p->next_version_id++;
	return true;
}

static int
find_workload(const Scenario *scn, const char *name)
{
	for (int i = 0; i < scn->nworkloads; i++)
		if (!strcmp(scn->workloads[i].name, name))
			return i;
	return -1;
}

static int
find_app(const Scenario *scn, const char *name)
{
	for (int i = 0; i < scn->napps; i++)
		if (!strcmp(scn->apps[i].name, name))
			return i;
	return -1;
}

static bool
copy_name(Parser *p, char *dst, const char *src)
{
	if (strlen(src) == 0 || strlen(src) >= NAME_LEN)
		return fail(p, "a name must have 1 to %d characters", NAME_LEN - 1);
	strcpy(dst, src);
	return true;
}

static bool
run_key(Parser *p, const char *key, char *val)
{
	Scenario   *s = p->scn;
	double		x;
	struct
	{
		const char *key;
		double	   *dst;
	}			durations[] = {
		{"length", &s->length}, {"tick", &s->tick}, {"bucket", &s->bucket},
		{"measure_from", &s->measure_from},
		{"transitioner_interval", &s->transitioner_interval},
		{"min_buffer", &s->min_buffer}, {"max_buffer", &s->max_buffer},
		{"request_interval", &s->request_interval},
		{"assign_interval", &s->assign_interval},
	};

	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++)
		if (!strcmp(key, durations[i].key))
		{
			if (!parse_duration(val, durations[i].dst))
				return fail(p, "%s: expected a duration such as 90, 10m, 6h, 7d, not \"%s\"", key, val);
			return true;
		}
	if (!strcmp(key, "name"))
		return copy_name(p, s->name, val);
	if (!strcmp(key, "seed") && parse_number(val, &x) && x >= 0)
		s->seed = (uint64_t) x;
	else if (!strcmp(key, "connections") && parse_number(val, &x) && x >= 1 && x <= 16)
		s->connections = (int) x;
	else if (!strcmp(key, "noise") && parse_number(val, &x) && x >= 0 && x < 1)
		s->noise = x;
	else if (!strcmp(key, "assign_jitter") && parse_number(val, &x) && x >= 0 && x < 1)
		s->assign_jitter = x;
	else if (!strcmp(key, "request") && (!strcmp(val, "explicit") || !strcmp(val, "buffer")))
		s->buffer_request = !strcmp(val, "buffer");
	else
		return fail(p, "[run]: unknown key or bad value: %s = %s", key, val);
	return true;
}

static bool
app_key(Parser *p, const char *key, char *val)
{
	ScnApp	   *a = &p->scn->apps[p->scn->napps - 1];

	if (!strcmp(key, "flops_per_au"))
	{
		if (!parse_number(val, &a->flops_per_au) || a->flops_per_au <= 0)
			return fail(p, "flops_per_au must be a positive number");
		return true;
	}
	if (!strcmp(key, "version"))
	{
		if (a->nversions == MAX_VERSIONS)
			return fail(p, "too many versions (at most %d)", MAX_VERSIONS);
		return parse_version(p, val, &a->versions[a->nversions++]);
	}
	return fail(p, "[app]: unknown key %s", key);
}

static bool
workload_key(Parser *p, const char *key, char *val)
{
	ScnWorkload *w = &p->scn->workloads[p->scn->nworkloads - 1];
	double		x;

	if (!strcmp(key, "app"))
	{
		w->app = find_app(p->scn, val);
		if (w->app < 0)
			return fail(p, "unknown app %s (declare it above)", val);
		if (w->engine[0] == '\0')
			strcpy(w->engine, p->scn->apps[w->app].name);
	}
	else if (!strcmp(key, "engine"))
		return copy_name(p, w->engine, val);
	else if (!strcmp(key, "throughput") && parse_number(val, &x) && x > 0)
		w->throughput = x;
	else if (!strcmp(key, "priority") && parse_number(val, &x) && x == floor(x))
		w->priority = (int) x;
	else if (!strcmp(key, "delay_bound"))
	{
		if (!parse_duration(val, &w->delay_bound) || w->delay_bound <= 0)
			return fail(p, "delay_bound: expected a positive duration");
	}
	else if (!strcmp(key, "jobs") && parse_number(val, &x) && x >= 0)
		w->jobs = (long) x;
	else if (!strcmp(key, "app_units"))
		return parse_dist(p, val, &w->app_units);
	else if (!strcmp(key, "replication") && (!strcmp(val, "adaptive") || !strcmp(val, "none")))
		w->adaptive_replication = !strcmp(val, "adaptive");
	else if (!strcmp(key, "predicted_app_units") && parse_number(val, &x) && x > 0)
		w->predicted_au = x;
	else if (!strcmp(key, "threads") && parse_number(val, &x) && x >= 1)
		w->threads = (int) x;
	else if (!strcmp(key, "start"))
	{
		if (!parse_duration(val, &w->start))
			return fail(p, "start: expected a duration");
	}
	else
		return fail(p, "[workload]: unknown key or bad value: %s = %s", key, val);
	return true;
}

static bool
hosts_key(Parser *p, const char *key, char *val)
{
	ScnHostGroup *g = &p->scn->groups[p->scn->ngroups - 1];
	double		x;

	if (!strcmp(key, "cpus") || !strcmp(key, "threads"))
	{
		char	   *tok;
		char	   *save = NULL;

		g->nchoices = 0;
		for (tok = strtok_r(val, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save))
		{
			if (g->nchoices == MAX_CHOICES || !parse_number(tok, &x) || x < 1 || x > 4096)
				return fail(p, "%s: expected up to %d whole numbers >= 1", key, MAX_CHOICES);
			g->cpus[g->nchoices++] = (int) x;
		}
		if (g->nchoices == 0)
			return fail(p, "%s: expected at least one number", key);
	}
	else if (!strcmp(key, "count") && parse_number(val, &x) && x >= 0)
		g->count = (int) x;
	else if (!strcmp(key, "registered") && (!strcmp(val, "yes") || !strcmp(val, "no")))
		g->registered = !strcmp(val, "yes");
	else if (!strcmp(key, "hyperthreaded"))
	{
		if (!parse_bool(val, &g->hyperthreaded))
			return fail(p, "hyperthreaded: yes or no");
	}
	else if (!strcmp(key, "sockets") && parse_number(val, &x) && x >= 1)
		g->sockets = (int) x;
	else if (!strcmp(key, "cpu_flops") && parse_number(val, &x) && x > 0)
		g->cpu_flops = x;
	else if (!strcmp(key, "gpus") && parse_number(val, &x) && x >= 0)
		g->gpus = (int) x;
	else if (!strcmp(key, "gpu_type"))
		return copy_name(p, g->gpu_type, val);
	else if (!strcmp(key, "gpu_flops") && parse_number(val, &x) && x > 0)
		g->gpu_flops = x;
	else if (!strcmp(key, "availability") && parse_number(val, &x) && x > 0 && x <= 1)
		g->availability = x;
	else if (!strcmp(key, "on_mean"))
	{
		if (!parse_duration(val, &g->on_mean) || g->on_mean <= 0)
			return fail(p, "on_mean: expected a positive duration");
	}
	else
		return fail(p, "[hosts]: unknown key or bad value: %s = %s", key, val);
	return true;
}

/* "AT KIND TARGET ARGS": priority W 1 | throughput W 2000 | state W paused |
 * version APP nvidia ncoprocs=1 */
static bool
event_line(Parser *p, char *line)
{
	Scenario   *s = p->scn;
	ScnEvent   *e;
	char		at[32], kind[32], target[NAME_LEN];
	int			used = 0;
	char	   *rest;

	if (s->nevents == MAX_EVENTS)
		return fail(p, "too many events (at most %d)", MAX_EVENTS);
	e = &s->events[s->nevents];
	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%31s %31s %63s %n", at, kind, target, &used) < 3 || used == 0)
		return fail(p, "event: expected \"AT KIND TARGET ARGS\"");
	rest = trim(line + used);
	if (!parse_duration(at, &e->at))
		return fail(p, "event: bad time %s", at);
	if (!strcmp(kind, "version"))
	{
		e->kind = EV_VERSION;
		e->target = find_app(s, target);
		if (e->target < 0)
			return fail(p, "event: unknown app %s", target);
		if (!parse_version(p, rest, &e->version))
			return false;
	}
	else
	{
		e->target = find_workload(s, target);
		if (e->target < 0)
			return fail(p, "event: unknown workload %s", target);
		if (!strcmp(kind, "priority") && parse_number(rest, &e->value) && e->value == floor(e->value))
			e->kind = EV_PRIORITY;
		else if (!strcmp(kind, "throughput") && parse_number(rest, &e->value) && e->value > 0)
			e->kind = EV_THROUGHPUT;
		else if (!strcmp(kind, "state") &&
				 (!strcmp(rest, "active") || !strcmp(rest, "paused") || !strcmp(rest, "finished")))
		{
			e->kind = EV_STATE;
			strcpy(e->state, rest);
		}
		else
			return fail(p, "event: expected priority N, throughput X, state active|paused|finished or version");
	}
	s->nevents++;
	return true;
}

static bool
section_header(Parser *p, char *line)
{
	Scenario   *s = p->scn;
	char	   *close = strchr(line, ']');
	char	   *name;
	char		word[32];
	int			used = 0;

	if (close == NULL || close[1] != '\0')
		return fail(p, "expected [section]");
	*close = '\0';
	if (sscanf(line + 1, "%31s %n", word, &used) < 1)
		return fail(p, "empty section name");
	name = trim(line + 1 + used);
	if (!strcmp(word, "run"))
		p->section = SEC_RUN;
	else if (!strcmp(word, "set"))
		p->section = SEC_SET;
	else if (!strcmp(word, "events"))
		p->section = SEC_EVENTS;
	else if (!strcmp(word, "app"))
	{
		if (s->napps == MAX_APPS)
			return fail(p, "too many apps");
		if (find_app(s, name) >= 0)
			return fail(p, "app %s declared twice", name);
		p->section = SEC_APP;
		return copy_name(p, s->apps[s->napps++].name, name);
	}
	else if (!strcmp(word, "workload"))
	{
		ScnWorkload *w;

		if (s->nworkloads == MAX_WORKLOADS)
			return fail(p, "too many workloads");
		if (find_workload(s, name) >= 0)
			return fail(p, "workload %s declared twice", name);
		p->section = SEC_WORKLOAD;
		w = &s->workloads[s->nworkloads++];
		w->app = -1;
		w->throughput = 1000;
		w->threads = 1;
		w->delay_bound = 7 * 86400;
		w->app_units.kind = DIST_FIXED;
		w->app_units.a = 1;
		return copy_name(p, w->name, name);
	}
	else if (!strcmp(word, "hosts"))
	{
		ScnHostGroup *g;

		if (s->ngroups == MAX_HOST_GROUPS)
			return fail(p, "too many host groups");
		p->section = SEC_HOSTS;
		g = &s->groups[s->ngroups++];
		g->count = 1;
		g->nchoices = 1;
		g->cpus[0] = 1;
		g->sockets = 1;
		g->cpu_flops = 1e9;
		strcpy(g->gpu_type, "nvidia");
		g->gpu_flops = 1e12;
		g->availability = 1;
		g->on_mean = 86400;
		return copy_name(p, g->name, name);
	}
	else
		return fail(p, "unknown section [%s]", word);
	return true;
}

bool
scenario_set(Scenario *scn, const char *assignment)
{
	const char *eq = strchr(assignment, '=');
	size_t		nlen;
	ScnSetting *st = NULL;

	if (eq == NULL || eq == assignment)
	{
		fprintf(stderr, "a setting must be name=value, not \"%s\"\n", assignment);
		return false;
	}
	nlen = (size_t) (eq - assignment);
	if (nlen >= NAME_LEN || strlen(eq + 1) >= NAME_LEN)
	{
		fprintf(stderr, "setting too long: %s\n", assignment);
		return false;
	}
	for (int i = 0; i < scn->nsettings; i++)
		if (strlen(scn->settings[i].name) == nlen &&
			!strncmp(scn->settings[i].name, assignment, nlen))
			st = &scn->settings[i];
	if (st == NULL)
	{
		if (scn->nsettings == MAX_SETTINGS)
		{
			fprintf(stderr, "too many settings\n");
			return false;
		}
		st = &scn->settings[scn->nsettings++];
	}
	memcpy(st->name, assignment, nlen);
	st->name[nlen] = '\0';
	strcpy(st->value, eq + 1);
	return true;
}

const char *
scenario_setting(const Scenario *scn, const char *name)
{
	for (int i = 0; i < scn->nsettings; i++)
		if (!strcmp(scn->settings[i].name, name))
			return scn->settings[i].value;
	return NULL;
}

static bool
key_value(Parser *p, char *line)
{
	char	   *eq = strchr(line, '=');
	char	   *key;
	char	   *val;
	char		buf[2 * NAME_LEN + 2];

	if (eq == NULL)
		return fail(p, "expected key = value");
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	switch (p->section)
	{
		case SEC_RUN:
			return run_key(p, key, val);
		case SEC_SET:
			if (snprintf(buf, sizeof(buf), "%s=%s", key, val) >= (int) sizeof(buf))
				return fail(p, "setting too long");
			return scenario_set(p->scn, buf) || fail(p, "bad setting");
		case SEC_APP:
			return app_key(p, key, val);
		case SEC_WORKLOAD:
			return workload_key(p, key, val);
		case SEC_HOSTS:
			return hosts_key(p, key, val);
		default:
			return fail(p, "key = value outside a section");
	}
}

static bool
validate(Parser *p)
{
	Scenario   *s = p->scn;
	int			with_app = 0;

	p->line = 0;
	if (s->nworkloads == 0 || s->ngroups == 0)
		return fail(p, "a scenario needs at least one [workload] and one [hosts] section");
	for (int i = 0; i < s->nworkloads; i++)
	{
		ScnWorkload *w = &s->workloads[i];

		if (w->engine[0] == '\0')
			return fail(p, "workload %s needs an app (job farm) or an engine (assignment farm)", w->name);
		with_app += w->app >= 0;
		if (w->predicted_au <= 0)
			w->predicted_au = dist_mean(&w->app_units);
	}
	if (with_app != 0 && with_app != s->nworkloads)
		return fail(p, "either every workload has an app (job farm) or none has (assignment farm)");
	s->job_farm = with_app > 0;
	for (int i = 0; i < s->napps; i++)
		if (s->apps[i].flops_per_au <= 0)
			return fail(p, "app %s needs flops_per_au", s->apps[i].name);
	if (s->length <= 0 || s->tick <= 0 || s->bucket < s->tick)
		return fail(p, "[run] needs length > 0, tick > 0 and bucket >= tick");
	if (s->measure_from >= s->length)
		return fail(p, "measure_from must be before the end of the run");
	if (s->min_buffer > s->max_buffer)
		return fail(p, "min_buffer must not exceed max_buffer");
	return true;
}

bool
scenario_load(Scenario *scn, const char *path)
{
	Parser		p = {scn, path, 0, SEC_NONE, 1};
	FILE	   *f = fopen(path, "r");
	char		raw[1024];

	if (f == NULL)
	{
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return false;
	}
	memset(scn, 0, sizeof(*scn));
	/* Defaults: see README.md, [run]. */
	scn->length = 86400;
	scn->tick = 60;
	scn->bucket = 3600;
	scn->seed = 1;
	scn->connections = 2;
	scn->transitioner_interval = 600;
	scn->min_buffer = 3600;
	scn->max_buffer = 6 * 3600;
	scn->request_interval = 300;
	scn->assign_interval = 600;
	{
		const char *base = strrchr(path, '/');
		const char *dot;

		base = base ? base + 1 : path;
		dot = strrchr(base, '.');
		snprintf(scn->name, NAME_LEN, "%.*s", dot ? (int) (dot - base) : NAME_LEN - 1, base);
	}
	while (fgets(raw, sizeof(raw), f) != NULL)
	{
		char	   *hash = strchr(raw, '#');
		char	   *line;
		bool		ok;

		p.line++;
		if (hash)
			*hash = '\0';
		line = trim(raw);
		if (*line == '\0')
			continue;
		if (*line == '[')
			ok = section_header(&p, line);
		else if (p.section == SEC_EVENTS)
			ok = event_line(&p, line);
		else
			ok = key_value(&p, line);
		if (!ok)
		{
			fclose(f);
			return false;
		}
	}
	fclose(f);
	return validate(&p);
}
