# allot: PGXS build.  `make && make install`, then see README.md for tests.

EXTENSION  = allot
MODULE_big = allot
OBJS = \
	src/entry.o \
	src/settings.o \
	src/allot.o \
	src/selection.o \
	src/fairness.o \
	src/credit.o \
	src/workload_cache.o \
	src/table_read.o \
	src/table_write.o \
	src/assign_host.o \
	src/assign_read.o \
	src/assign_pick.o \
	src/assign_commit.o \
	src/assign.o \
	src/assignment.o \
	src/assignment_usage.o \
	src/usage.o \
	src/usage_cache.o \
	src/signal.o \
	src/estimate.o \
	src/host_queue.o \
	src/host_queue_glue.o \
	src/dispatch_host.o \
	src/request_parse.o \
	src/dispatch_read.o \
	src/dispatch_pick.o \
	src/job_admin.o \
	src/dispatch_commit.o \
	src/dispatch.o \
	src/report.o \
	src/percentile.o \
	src/app_unit_stats.o \
	src/voices.o \
	src/owner.o \
	src/names.o \
	src/retention.o \
	src/transitioner_learn.o \
	src/share_history.o \
	src/transitioner.o \
	src/quorum.o \
	src/validate.o

DATA = $(wildcard allot--*.sql)

PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers

# pg_regress: behaviour with exact expected output
REGRESS = upgrade setup assign_examples capability selection_rules concurrency_settings \
	expiry dispatch seed003 transitioner fairness robust_estimates parallel_settings
# isolation: concurrent sessions
ISOLATION = assign_concurrent busy_rows dispatch_concurrent lock_order \
	heartbeat_assign fold_concurrent operator_edits pick_hints \
	repeat_sweep share_history_concurrent host_write retention hint_truncate \
	usage_write usage_signal

# Both get a throwaway cluster with pg_cron preloaded (test/regress.conf).
REGRESS_OPTS   = --temp-instance=tmp_check --temp-config=test/regress.conf
ISOLATION_OPTS = --temp-instance=tmp_check_iso --temp-config=test/regress.conf

EXTRA_CLEAN = tmp_check tmp_check_iso results output_iso regression.diffs regression.out

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
