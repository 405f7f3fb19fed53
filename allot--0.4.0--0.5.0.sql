/* allot 0.4.0 -> 0.5.0: untrusted web roles and hosts, self-registering
 * hosts, status views, OpenBench to the letter, and catalog comments.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.5.0'" to load this file. \quit

/* ---------------------------------------------------------------------------
 * Policy, ownership and untrusted input.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * OpenBench to the letter.
 * ------------------------------------------------------------------------- */

/*
 * Several compilers per engine.  OpenBench's engine configurations list the
 * compilers an engine builds with, any one of which will do, each with an
 * optional minimum version: ["g++>=11.0.0", "clang++>=16.0.0"].  compilers
 * holds that list, written the same way.  The single compiler/compiler_min
 * pair keeps working as one more alternative, so existing scripts and rows
 * need no change; this update moves existing pairs into the list, so that
 * each requirement has one place.
 */
ALTER TABLE allot.engine ADD COLUMN compilers text[];

-- Each element is a compiler name without blanks, '<', '>' or '=', then
-- optionally '>=' and a dotted version.  Blank-free names let the elements
-- be checked joined by a blank.  An empty list would mean no compiler
-- fits; NULL says "none needed" instead.
ALTER TABLE allot.engine ADD CONSTRAINT engine_compilers_format
    CHECK (compilers IS NULL OR
           (array_ndims(compilers) = 1 AND array_position(compilers, NULL) IS NULL AND
            array_to_string(compilers, ' ') ~
              '^[^[:space:]<>=]+(>=[0-9]+(\.[0-9]+)*)?( [^[:space:]<>=]+(>=[0-9]+(\.[0-9]+)*)?)*$'));

-- A pair whose name would not make a list element (blanks, '>=') stays a
-- pair: it still works as before.
UPDATE allot.engine
   SET compilers = coalesce(compilers, '{}') ||
                   (compiler || coalesce('>=' || compiler_min, '')),
       compiler = NULL,
       compiler_min = NULL
 WHERE compiler ~ '^[^[:space:]<>=]+$';

-- A minimum without a compiler was ignored; from now on it is refused,
-- so that setting compiler_min on an engine whose pair was moved into the
-- list fails loudly instead of doing nothing.
UPDATE allot.engine SET compiler_min = NULL WHERE compiler IS NULL AND compiler_min IS NOT NULL;
ALTER TABLE allot.engine ADD CONSTRAINT engine_compiler_min_needs_compiler
    CHECK (compiler_min IS NULL OR compiler IS NOT NULL);

/* ---------------------------------------------------------------------------
 * Hosts that register themselves (the BOINC front end).
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Status views and the allot_monitor role.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Catalog comments.
 * ------------------------------------------------------------------------- */
