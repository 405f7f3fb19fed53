/*
 * request_parse.c: request_work's request, from JSON into what the host
 * wants per resource (dispatch.h, stage "parse").
 *
 *   {"resources": {"cpu": {"req_secs", "req_instances", "estimated_delay"},
 *                  "<coprocessor>": {...}},
 *    "work_req_seconds",                  old clients, without "resources"
 *    "no_gpus", "exclude": [workload ids],
 *    "buffer": {"min_secs", "max_secs"},  thin clients: the server works out
 *                                         the request from the host's queue
 *    "app_versions": {"<id>": {"seconds_per_app_unit", "raw_flops_per_sec"}}}
 *
 * A request comes from a stranger: every key must be one of these, every
 * amount a number within allot's ranges (entry.h), or the request is
 * refused with 22023 naming the key and value.
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "dispatch.h"
#include "entry.h"
#include "host_queue_glue.h"

static void
bad_request(const char *fmt, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg(fmt, what),
			 errhint("See the request format of allot.request_work in docs/functions.md.")));
}

static const char *
json_value_text(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			/* Cut at a character boundary: the message must stay valid text. */
			return psprintf("\"%.*s\"",
							pg_mbcliplen(v->val.string.val, v->val.string.len, 64),
							v->val.string.val);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(v->val.numeric)));
		case jbvBool:
			return v->val.boolean ? "true" : "false";
		case jbvBinary:
			return JsonContainerIsArray(v->val.binary.data) ? "an array" : "an object";
		default:
			return "an array or object";
	}
}

/* A non-negative finite number at `path`, at most `max`. */
static double
json_amount(const JsonbValue *v, const char *path, double max)
{
	double		d;

	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a non-negative number, not %s", path, json_value_text(v))));
	/* Huge numbers become infinity here, and are refused below by name. */
	d = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
										   NumericGetDatum(v->val.numeric)));
	if (!isfinite(d) || d < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a non-negative number, not %s", path, json_value_text(v))));
	if (d > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at most %g, not %s", path, max, json_value_text(v))));
	return d;
}

static int64
json_id(const JsonbValue *v, const char *path)
{
	double		d = json_amount(v, path, 9.2e18);

	if (d != floor(d))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a whole number, not %s", path, json_value_text(v))));
	return (int64) d;
}

static JsonbContainer *
json_object_at(const JsonbValue *v, const char *path)
{
	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object, not %s", path, json_value_text(v))));
	return v->val.binary.data;
}

static bool
json_key(JsonbContainer *c, const char *key, JsonbValue *out)
{
	return getKeyJsonValueFromContainer(c, key, strlen(key), out) != NULL;
}

/*
 * An object may hold only the keys its place in the request allows: a key
 * misspelt by a client would otherwise be ignored, and the request answered
 * as if it had asked for nothing.
 */
static void
json_only_keys(JsonbContainer *c, const char *path, const char *const *allowed)
{
	JsonbIterator *it = JsonbIteratorInit(c);
	JsonbValue	key;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		bool		known = false;
		StringInfoData list;

		if (tok != WJB_KEY)
			continue;
		for (int i = 0; allowed[i] != NULL && !known; i++)
			known = strlen(allowed[i]) == (size_t) key.val.string.len &&
				memcmp(allowed[i], key.val.string.val, key.val.string.len) == 0;
		if (known)
			continue;
		initStringInfo(&list);
		for (int i = 0; allowed[i] != NULL; i++)
			appendStringInfo(&list, "%s%s", i > 0 ? ", " : "", allowed[i]);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown key %s in %s", json_value_text(&key), path),
				 errhint("%s takes: %s.", path, list.data)));
	}
}

static const char *const request_keys[] = {
	"resources", "work_req_seconds", "no_gpus", "exclude", "buffer", "app_versions", NULL
};
static const char *const resource_keys[] = {
	"req_secs", "req_instances", "estimated_delay", NULL
};
static const char *const buffer_keys[] = {"min_secs", "max_secs", NULL};
static const char *const client_version_keys[] = {
	"seconds_per_app_unit", "raw_flops_per_sec", NULL
};

/* Walk the members of an object: calls back with each key and value. */
typedef void (*MemberFn) (const char *key, JsonbValue *value, void *arg);

static void
json_members(JsonbContainer *c, MemberFn fn, void *arg)
{
	JsonbIterator *it = JsonbIteratorInit(c);
	JsonbValue	key,
				value;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		char	   *name;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(key.val.string.val, key.val.string.len);
		if (JsonbIteratorNext(&it, &value, true) != WJB_VALUE)
			elog(ERROR, "malformed jsonb object");
		fn(name, &value, arg);
	}
}

typedef struct ParseState
{
	Request    *req;
	const WorkloadCache *cache;
} ParseState;

static void
parse_resource(const char *name, JsonbValue *value, void *arg)
{
	ParseState *ps = arg;
	int			r = allot_resource_index(ps->cache, name);
	JsonbContainer *obj;
	JsonbValue	v;
	ResourceRequest *rr;

	if (r < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown resource \"%s\" in request.resources", name),
				 errhint("Resource types are the rows of allot.resource.")));
	obj = json_object_at(value, psprintf("request.resources.%s", name));
	json_only_keys(obj, psprintf("request.resources.%s", name), resource_keys);
	rr = &ps->req->rsc[r];
	if (json_key(obj, "req_secs", &v))
		rr->secs = json_amount(&v, psprintf("request.resources.%s.req_secs", name),
							   ALLOT_MAX_SECS);
	if (json_key(obj, "req_instances", &v))
		rr->instances = json_amount(&v, psprintf("request.resources.%s.req_instances", name),
									ALLOT_MAX_INSTANCES);
	if (json_key(obj, "estimated_delay", &v))
		rr->delay = json_amount(&v, psprintf("request.resources.%s.estimated_delay", name),
								ALLOT_MAX_SECS);
	/*
	 * A host has no more idle instances than instances: more are not
	 * counted (a host the request names no instances of has no version
	 * that runs there, and is answered so).
	 */
	if (rr->ninstances > 0 && rr->instances > rr->ninstances)
		rr->instances = rr->ninstances;
	/* A resource is served only if something of it is asked for (seed 001). */
	rr->requested = rr->secs > 0 || rr->instances > 0;
}

static void
parse_client_version(const char *name, JsonbValue *value, void *arg)
{
	ParseState *ps = arg;
	ClientVersion *cv = &ps->req->client[ps->req->n_client];
	JsonbContainer *obj;
	JsonbValue	v;
	char	   *end;
	long long	id = strtoll(name, &end, 10);
	bool		known = false;

	/* Only the plain decimal form: "011" or " 11" would name 11 twice. */
	if (*name == '\0' || *end != '\0' || id <= 0 ||
		strcmp(name, psprintf("%lld", id)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request.app_versions keys must be app version ids, not \"%s\"", name)));
	for (int i = 0; i < ps->cache->n_versions; i++)
		if (ps->cache->versions[i].id == id)
			known = true;
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown app version %lld in request.app_versions", id)));
	obj = json_object_at(value, psprintf("request.app_versions.%s", name));
	json_only_keys(obj, psprintf("request.app_versions.%s", name), client_version_keys);
	memset(cv, 0, sizeof(*cv));
	cv->version_id = id;
	/* 0 means "not stated"; anything else must be in range. */
	if (json_key(obj, "seconds_per_app_unit", &v))
	{
		char	   *path = psprintf("request.app_versions.%s.seconds_per_app_unit", name);

		cv->seconds_per_app_unit = json_amount(&v, path, ALLOT_MAX_SECS);
		if (cv->seconds_per_app_unit != 0)
			allot_check_range(cv->seconds_per_app_unit, ALLOT_MIN_SECS, ALLOT_MAX_SECS, path);
	}
	if (json_key(obj, "raw_flops_per_sec", &v))
	{
		char	   *path = psprintf("request.app_versions.%s.raw_flops_per_sec", name);

		cv->raw_flops_per_sec = json_amount(&v, path, ALLOT_MAX_FLOPS);
		if (cv->raw_flops_per_sec != 0)
			allot_check_range(cv->raw_flops_per_sec, ALLOT_MIN_FLOPS, ALLOT_MAX_FLOPS, path);
	}
	ps->req->n_client++;
}

/* The buffer form: the server works out what the host needs (seed 002). */
static void
request_from_buffer(Request *req, const WorkloadCache *cache, int64 host_id,
					TimestampTz now, double min_buf_secs, double max_buf_secs)
{
	QueueResource *need = palloc0(sizeof(QueueResource) * (cache->n_resources + 1));

	allot_simulate_host_queue(cache, host_id, max_buf_secs, now, need);
	for (int r = 0; r < cache->n_resources; r++)
	{
		ResourceRequest *rr = &req->rsc[r];

		if (need[r].ninstances <= 0 || (req->no_gpus && r != cache->cpu))
			continue;
		/* Fetch only for resources that will not stay busy for min_buf. */
		if (need[r].saturated_secs >= min_buf_secs)
			continue;
		rr->secs = need[r].shortfall_secs;
		rr->instances = floor(need[r].idle_instances + 1e-9);
		rr->delay = need[r].busy_secs;
		rr->requested = rr->secs > 0 || rr->instances > 0;
	}
}

/*
 * Parse the request into d->req: per resource, what the host wants (seed
 * 001's per-resource requests, an old client's work_req_seconds, or the
 * buffer form worked out by the server), and what the client says of its
 * app versions.  Every key and value is checked; nothing is trusted.
 */
void
allot_parse_request(Dispatch *d, Jsonb *json)
{
	Request    *req = &d->req;
	const WorkloadCache *cache = d->cache;
	const DispatchHost *host = &d->host;
	JsonbContainer *root = &json->root;
	JsonbValue	v;
	ParseState	ps = {req, cache};
	bool		by_resource = false;

	if (JB_ROOT_IS_SCALAR(json))
	{
		JsonbValue	scalar;

		JsonbExtractScalar(root, &scalar);
		bad_request("request must be a JSON object, not %s", json_value_text(&scalar));
	}
	if (!JB_ROOT_IS_OBJECT(json))
		bad_request("request must be a JSON object, not %s", "an array");
	json_only_keys(root, "request", request_keys);

	memset(req, 0, sizeof(*req));
	req->rsc = palloc0(sizeof(ResourceRequest) * (cache->n_resources + 1));
	for (int r = 0; r < cache->n_resources; r++)
		req->rsc[r].ninstances = r == cache->cpu ? host->threads : host->coproc_count[r];

	if (json_key(root, "no_gpus", &v))
	{
		if (v.type != jbvBool)
			bad_request("request.no_gpus must be true or false, not %s", json_value_text(&v));
		req->no_gpus = v.val.boolean;
	}
	if (json_key(root, "exclude", &v))
	{
		JsonbIterator *it;
		JsonbValue	e;
		JsonbIteratorToken tok;
		int			cap;

		if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
			bad_request("request.exclude must be an array of workload ids, not %s",
						json_value_text(&v));
		cap = JsonContainerSize(v.val.binary.data);
		req->exclude = palloc(sizeof(int64) * (cap > 0 ? cap : 1));
		it = JsonbIteratorInit(v.val.binary.data);
		while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
			if (tok == WJB_ELEM)
				req->exclude[req->n_exclude++] = json_id(&e, "request.exclude[]");
	}
	if (json_key(root, "app_versions", &v))
	{
		JsonbContainer *obj = json_object_at(&v, "request.app_versions");

		req->client = palloc0(sizeof(ClientVersion) * (JsonContainerSize(obj) + 1));
		json_members(obj, parse_client_version, &ps);
	}
	if (json_key(root, "resources", &v))
	{
		json_members(json_object_at(&v, "request.resources"), parse_resource, &ps);
		by_resource = true;
	}
	else if (json_key(root, "work_req_seconds", &v))
	{
		/* An old client: one pool of seconds, any resource the host has. */
		double		secs = json_amount(&v, "request.work_req_seconds", ALLOT_MAX_SECS);

		req->shared_seconds = true;
		for (int r = 0; r < cache->n_resources; r++)
		{
			req->rsc[r].secs = secs;
			req->rsc[r].requested = secs > 0 && req->rsc[r].ninstances > 0;
		}
	}
	if (json_key(root, "buffer", &v))
	{
		JsonbContainer *obj = json_object_at(&v, "request.buffer");
		JsonbValue	b;
		double		min_secs = 0,
					max_secs = 0;

		json_only_keys(obj, "request.buffer", buffer_keys);
		if (json_key(obj, "min_secs", &b))
			min_secs = json_amount(&b, "request.buffer.min_secs", ALLOT_MAX_SECS);
		if (json_key(obj, "max_secs", &b))
			max_secs = json_amount(&b, "request.buffer.max_secs", ALLOT_MAX_SECS);
		/* Explicit requests win: the buffer form is for thin clients. */
		if (!by_resource && !req->shared_seconds)
			request_from_buffer(req, cache, host->id, d->now, min_secs,
								Max(min_secs, max_secs));
	}
	if (req->no_gpus)
		for (int r = 0; r < cache->n_resources; r++)
			if (r != cache->cpu)
				req->rsc[r].requested = false;
}

