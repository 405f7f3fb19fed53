/*
 * pipeline.c: the connections, and how one tick's contacts reach allot.
 *
 * Each host always uses the same connection (host id modulo the number of
 * connections), so one host's contacts stay in order.  A contact is sent in
 * libpq pipeline mode, each call followed by a Sync: every call is its own
 * implicit transaction, as docs/web-layer.md asks
 * (one statement per transaction).  A BOINC scheduler RPC would carry the
 * reports and the request together, but in one transaction a report's
 * job_usage row and the request's rows are locked in no global order, and
 * two such transactions can deadlock.  Many contacts are in flight per
 * connection at once (a window of them), so a tick costs about one round
 * trip, and the connections run in parallel on the server's cores.
 *
 * The control connection is a plain one, used between ticks only: farm
 * set-up, scenario events, the transitioner and the bucket samples.
 */
#include "emulator.h"

#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Contacts in flight per connection: enough to hide the round trip, few
 * enough that neither side's socket buffer fills up. */
#define WINDOW 128

PGconn *
connect_db(const char *conninfo)
{
	PGconn	   *conn = PQconnectdb(conninfo);

	if (PQstatus(conn) != CONNECTION_OK)
	{
		fprintf(stderr, "cannot connect: %s", PQerrorMessage(conn));
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

bool
pipeline_open(Emulator *em, int nconn)
{
	em->pipe.nconn = 0;
	for (int i = 0; i < nconn; i++)
	{
		PGconn	   *conn = connect_db(em->conninfo);

		if (conn == NULL)
			return false;
		em->pipe.conns[em->pipe.nconn++] = conn;
		if (!apply_settings(em, conn))
			return false;
	}
	return true;
}

void
pipeline_close(Emulator *em)
{
	for (int i = 0; i < em->pipe.nconn; i++)
		PQfinish(em->pipe.conns[i]);
	em->pipe.nconn = 0;
}

/* Prepare a statement on every pipelined connection. */
bool
prepare_all(Emulator *em, const char *name, const char *sql, int nparams)
{
	for (int i = 0; i < em->pipe.nconn; i++)
	{
		PGresult   *res = PQprepare(em->pipe.conns[i], name, sql, nparams, NULL);

		if (PQresultStatus(res) != PGRES_COMMAND_OK)
		{
			fprintf(stderr, "prepare %s: %s", name, PQerrorMessage(em->pipe.conns[i]));
			PQclear(res);
			return false;
		}
		PQclear(res);
	}
	for (int i = 0; i < em->pipe.nconn; i++)
		if (PQsetnonblocking(em->pipe.conns[i], 1) != 0 ||
			PQpipelineStatus(em->pipe.conns[i]) != PQ_PIPELINE_OFF)
			return false;
	return true;
}

bool
control_exec(Emulator *em, const char *sql)
{
	PGresult   *res = PQexec(em->control, sql);
	ExecStatusType st = PQresultStatus(res);

	PQclear(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
	{
		fprintf(stderr, "%s\nfailed: %s", sql, PQerrorMessage(em->control));
		return false;
	}
	return true;
}

/* A query on the control connection; NULL (after a message) on error. */
PGresult *
control_query(Emulator *em, const char *sql, int nparams, const char *const *values)
{
	PGresult   *res = PQexecParams(em->control, sql, nparams, NULL, values, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK && PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		fprintf(stderr, "%s\nfailed: %s", sql, PQerrorMessage(em->control));
		PQclear(res);
		return NULL;
	}
	em->m.calls_all++;
	return res;
}

/* ---------------------------------------------------------------------------
 * The tick's contacts, calls and their parameter strings.
 */
static void *
grow(void *p, int *cap, int need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = need > 2 * *cap ? need : 2 * *cap;
	p = realloc(p, (size_t) *cap * size);
	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

void
tick_reset(Emulator *em)
{
	em->ncontacts = 0;
	em->ncalls = 0;
	em->chunk = 0;
	em->chunk_used = 0;
}

#define CHUNK_SIZE (1 << 20)

/* Parameter strings live until the next tick_reset.  They are written into
 * chunks that never move, because the calls of the tick point into them. */
const char *
arena_printf(Emulator *em, const char *fmt,...)
{
	va_list		ap;
	int			n;
	char	   *dst;

	if (em->nchunks == 0 || CHUNK_SIZE - em->chunk_used < 4096)
	{
		if (em->nchunks > 0)
			em->chunk++;
		if (em->chunk >= em->nchunks)
		{
			em->chunks = realloc(em->chunks, sizeof(char *) * (size_t) (em->nchunks + 1));
			if (em->chunks == NULL || (em->chunks[em->nchunks] = malloc(CHUNK_SIZE)) == NULL)
			{
				fprintf(stderr, "out of memory\n");
				exit(2);
			}
			em->nchunks++;
		}
		em->chunk_used = 0;
	}
	dst = em->chunks[em->chunk] + em->chunk_used;
	va_start(ap, fmt);
	n = vsnprintf(dst, 4096, fmt, ap);
	va_end(ap);
	if (n >= 4096)
	{
		fprintf(stderr, "internal error: parameter longer than 4096 bytes\n");
		exit(2);
	}
	em->chunk_used += (size_t) n + 1;
	return dst;
}

Contact *
contact_begin(Emulator *em, Host *h)
{
	Contact    *c;

	em->contacts = grow(em->contacts, &em->contacts_cap, em->ncontacts + 1, sizeof(Contact));
	c = &em->contacts[em->ncontacts++];
	c->host = h;
	c->first_call = em->ncalls;
	c->ncalls = 0;
	return c;
}

Call *
contact_call(Emulator *em, Contact *c, const char *stmt)
{
	Call	   *call;

	em->calls = grow(em->calls, &em->calls_cap, em->ncalls + 1, sizeof(Call));
	call = &em->calls[em->ncalls++];
	memset(call, 0, sizeof(*call));
	call->stmt = stmt;
	c->ncalls++;
	return call;
}

/* ---------------------------------------------------------------------------
 * Sending a tick's contacts and reading the results.
 */
typedef struct ConnState
{
	int		   *order;			/* contact indexes of this connection */
	int			n;
	int			sent;			/* contacts sent */
	int			done;			/* contacts whose last Sync came back */
	int			call;			/* results read of contact [done] */
	int			synced;			/* Syncs read of contact [done] */
	bool		flushing;
} ConnState;

static bool
send_contact(Emulator *em, PGconn *conn, Contact *c)
{
	for (int i = 0; i < c->ncalls; i++)
	{
		Call	   *call = &em->calls[c->first_call + i];

		if (!PQsendQueryPrepared(conn, call->stmt, call->nparams, call->values, NULL, NULL, 0) ||
			PQpipelineSync(conn) != 1)
			return false;
	}
	return true;
}

static void
note_error(Emulator *em, Contact *c, Call *call, PGresult *res)
{
	em->pipe.errors++;
	if (em->pipe.first_error[0] == '\0')
		snprintf(em->pipe.first_error, sizeof(em->pipe.first_error),
				 "host %lld, %s: %s", (long long) c->host->id, call->stmt,
				 PQresultErrorMessage(res));
}

/* Read whatever results are ready on one connection. */
static bool
read_results(Emulator *em, PGconn *conn, ConnState *cs, ResultFn fn, void *ctx)
{
	if (!PQconsumeInput(conn))
		return false;
	while (cs->done < cs->sent && !PQisBusy(conn))
	{
		PGresult   *res = PQgetResult(conn);
		Contact    *c = &em->contacts[cs->order[cs->done]];
		ExecStatusType st;

		if (res == NULL)
			continue;			/* the end of one call's results */
		st = PQresultStatus(res);
		if (st == PGRES_PIPELINE_SYNC)
		{
			if (++cs->synced == c->ncalls)
			{
				cs->done++;
				cs->call = 0;
				cs->synced = 0;
			}
		}
		else if (cs->call < c->ncalls)
		{
			Call	   *call = &em->calls[c->first_call + cs->call];

			if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
				fn(ctx, c, call, res);
			else if (st != PGRES_PIPELINE_ABORTED)
				note_error(em, c, call, res);
			cs->call++;
		}
		PQclear(res);
	}
	return true;
}

bool
pipeline_run(Emulator *em, ResultFn fn, void *ctx)
{
	int			nconn = em->pipe.nconn;
	ConnState	cs[16];
	int		   *order = malloc(sizeof(int) * (size_t) (em->ncontacts + 1));
	int			pos = 0;
	bool		ok = true;

	if (order == NULL)
		return false;
	memset(cs, 0, sizeof(cs));
	/* Group the contacts by connection, keeping their order. */
	for (int k = 0; k < nconn; k++)
	{
		cs[k].order = order + pos;
		for (int i = 0; i < em->ncontacts; i++)
			if (em->contacts[i].host->conn == k)
				order[pos++] = i;
		cs[k].n = (int) (order + pos - cs[k].order);
	}
	em->m.calls_all += em->ncalls;
	for (int k = 0; k < nconn; k++)
		if (cs[k].n > 0 && PQenterPipelineMode(em->pipe.conns[k]) != 1)
			ok = false;

	while (ok)
	{
		struct pollfd pfd[16];
		bool		pending = false;

		for (int k = 0; k < nconn && ok; k++)
		{
			PGconn	   *conn = em->pipe.conns[k];
			int			f;

			while (cs[k].sent < cs[k].n && cs[k].sent - cs[k].done < WINDOW)
			{
				if (!send_contact(em, conn, &em->contacts[cs[k].order[cs[k].sent]]))
				{
					ok = false;
					break;
				}
				cs[k].sent++;
			}
			f = PQflush(conn);
			if (f < 0)
				ok = false;
			cs[k].flushing = f == 1;
			pfd[k].fd = PQsocket(conn);
			pfd[k].events = (short) ((cs[k].done < cs[k].sent ? POLLIN : 0) |
									 (cs[k].flushing ? POLLOUT : 0));
			pfd[k].revents = 0;
			if (cs[k].done < cs[k].n)
				pending = true;
			else
				pfd[k].fd = -1;
		}
		if (!ok || !pending)
			break;
		if (poll(pfd, (nfds_t) nconn, -1) < 0)
		{
			ok = false;
			break;
		}
		for (int k = 0; k < nconn && ok; k++)
			if (pfd[k].fd >= 0 && (pfd[k].revents & (POLLIN | POLLERR | POLLHUP)))
				ok = read_results(em, em->pipe.conns[k], &cs[k], fn, ctx);
	}
	for (int k = 0; k < nconn; k++)
	{
		if (!ok)
			fprintf(stderr, "connection %d: %s", k, PQerrorMessage(em->pipe.conns[k]));
		if (cs[k].n > 0 && ok && PQexitPipelineMode(em->pipe.conns[k]) != 1)
		{
			fprintf(stderr, "connection %d: %s", k, PQerrorMessage(em->pipe.conns[k]));
			ok = false;
		}
	}
	free(order);
	return ok;
}

/* Send this tick's contacts; false, with the first failure shown, if any call failed. */
bool
run_contacts(Emulator *em, ResultFn fn)
{
	if (em->ncontacts > 0 && !pipeline_run(em, fn, em))
		return false;
	if (em->pipe.errors > 0)
	{
		fprintf(stderr, "\n%ld call(s) failed; the first: %s", em->pipe.errors, em->pipe.first_error);
		return false;
	}
	return true;
}
