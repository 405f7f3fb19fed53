/* allot 0.6.0 -> 0.7.0.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.7.0'" to load this file. \quit
