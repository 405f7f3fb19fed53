/* allot 0.8.0 -> 0.8.1.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.8.1'" to load this file. \quit


/* ---------------------------------------------------------------------------
 * A switch's write of the host's row is heap-only (issue 33).
 *
 * A switch writes host.last_workload_id.  The index on that column made
 * every such write a new version outside the row's HOT chain, with a new
 * entry in each of allot.host's indexes: on a farm where most requests
 * switch, those entries were most of what writing the host's row cost.  No
 * request reads hosts by their last workload; the index served only the
 * foreign key's ON DELETE SET NULL, when an operator deletes a workload.
 * That DELETE now reads allot.host once for each workload it deletes (a
 * sequential scan: tens of milliseconds at 100,000 hosts), which is rare
 * (a finished workload is kept, not deleted) and the operator's own time.
 * The foreign key stays: last_workload_id names a workload or nothing.
 * An operator who deletes many workloads at once, and would rather have
 * the scan indexed, may create the index again; the requests keep working,
 * at the old cost of a switch.
 * ------------------------------------------------------------------------- */
DROP INDEX allot.host_last_workload_idx;
