/* allot 0.7.0 -> 0.8.0.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.8.0'" to load this file. \quit


/* ---------------------------------------------------------------------------
 * A repeat reads its assignment where the host's row says it is (issue 33).
 *
 * An assignment request reads the host's row and the host's assignment, each
 * through its primary key: two index descents, the larger part of what a
 * repeat costs besides its one write.  The host's row now remembers where
 * its assignment row is: the TID its HOT chain starts at, which a repeat's
 * update (seen_at alone, no indexed column) keeps.  assign_workload reads
 * the assignment there, and through the key only when the hint is missing
 * or no longer leads to this host's row, which is always checked: any value
 * in the column is safe, and a wrong one costs a read.  A switch writes the
 * new place with the host's last workload, a new assignment writes its
 * place, and a request that finds the column NULL writes it (a heap-only
 * update, as no index holds the column); a place that is only out of date
 * waits for the host's next switch, since on a small, busy farm rows move
 * often.  Only assign_workload writes it.
 *
 * Existing hosts get theirs at their next request: the update fills no
 * column, so it rewrites nothing and holds allot.host's lock only a moment.
 * After a restore from a dump, which puts the rows elsewhere, an operator
 * sets the column to NULL to have every host write its place again.
 * ------------------------------------------------------------------------- */
ALTER TABLE allot.host ADD COLUMN assignment_tid tid;
COMMENT ON COLUMN allot.host.assignment_tid IS
    'Allot writes: where this host''s row of allot.assignment starts, a hint for assign_workload, checked at every read (any value is safe)';
