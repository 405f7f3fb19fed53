/* allot 0.5.1 -> 0.5.2: a repeat assignment fires no usage trigger.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.5.2'" to load this file. \quit

/* A repeat assignment writes only seen_at (src/assignment.c).  PostgreSQL
 * compiles a row trigger's WHEN clause at every statement that may fire it,
 * and this one's four comparisons were the largest part of a repeat's
 * UPDATE.  With the columns named, an UPDATE that sets none of them skips
 * the trigger before its WHEN clause is read; one that sets any of them
 * (a switch, a sweep, an operator's edit) is tested as before. */
DROP TRIGGER assignment_usage_change ON allot.assignment;
CREATE TRIGGER assignment_usage_change
    AFTER UPDATE OF workload_id, threads, focus, counted ON allot.assignment
    FOR EACH ROW
    WHEN (OLD.workload_id IS DISTINCT FROM NEW.workload_id OR OLD.threads IS DISTINCT FROM NEW.threads
          OR OLD.focus IS DISTINCT FROM NEW.focus OR OLD.counted IS DISTINCT FROM NEW.counted)
    EXECUTE FUNCTION allot.assignment_usage_trigger();
