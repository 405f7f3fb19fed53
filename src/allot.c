/*
 * allot.c: module entry point.
 *
 * allot keeps no shared memory: all of its state is in tables of schema
 * allot, so it needs no shared_preload_libraries entry and survives crashes
 * and restarts with whatever the tables say.  The only per-backend state is
 * the workload cache (workload_cache.c), prepared plans, and the settings
 * that could not be applied (settings.c).
 */
#include "postgres.h"

#include "fmgr.h"

#include "settings.h"
#include "workload_cache.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	allot_define_settings();
	allot_workload_cache_init();
}
