/*
 * signal.h: a change one transaction makes, told to every backend that
 * keeps a copy of it (the usage copy, usage_cache.c; what a backend knows
 * of the watch list, assignment_usage.c).
 *
 * A signal is named by an empty table of schema allot
 * (workload_usage_signal, assignment_watch_signal) and carried by
 * PostgreSQL's shared invalidation: queued by the changing transaction,
 * delivered to every backend of the database when it commits (before its
 * locks are let go), to the changing backend itself at its next command,
 * and dropped if it aborts.  A reader counts the signals it hears and reads
 * its copy again when the count moved.
 *
 * Until 0.8.1's library the signal was a relcache invalidation of the
 * signal's table.  Every backend that hears one runs every relcache
 * callback: the plan cache walks each saved plan's list of relations, the
 * type cache its whole table.  Where most requests switch, each backend
 * hears one per other backend's switch, and at 32 clients those walks
 * were 4% of the server's CPU per request.  PostgreSQL has no message of an
 * extension's own; the cheapest one a callback hears is a catalog cache
 * entry's, which reaches only the callbacks of that one cache.  So the
 * signal is the invalidation of an entry of pg_default_acl's cache under a
 * key no entry has: the signal table's OID where a role's goes, no schema,
 * and the relation kind.  Nothing is written to pg_default_acl; at worst a
 * real entry with the same hash is looked up again.
 *
 * A signal may name a part of what its table stands for (a row of the
 * usage, by its workload): a reader that kept the key of each part it holds
 * reads again only the parts it was told of.  The whole's key is told when
 * the sender does not know which parts changed (a statement).
 *
 * Readers still hear the relcache invalidation of the signal's table: a
 * backend on an older library signals that way, and the table's DROP
 * (the extension made again) sends one.
 */
#ifndef ALLOT_SIGNAL_H
#define ALLOT_SIGNAL_H

#include "utils/inval.h"

/*
 * When this transaction commits, every backend's copy read through the
 * signal table `name` of schema nsp is stale (nothing on a schema without
 * that table).
 */
extern void allot_signal_readers(Oid nsp, const char *name);

/* The same for one part: the copies of that part only are stale. */
extern void allot_signal_part(Oid nsp, const char *name, int64 part);

/*
 * A reader: fn hears every signal, with a hash value to compare with
 * allot_signal_key() of its table, for the whole, and
 * allot_signal_part_key() of each part it holds (0: a reset, which may have
 * been any signal).  A value that is both, or several parts', stands for
 * each of them.  Register once per backend.
 */
extern void allot_signal_listen(SyscacheCallbackFunction fn);
extern uint32 allot_signal_key(Oid relid);
extern uint32 allot_signal_part_key(Oid relid, int64 part);

#endif							/* ALLOT_SIGNAL_H */
