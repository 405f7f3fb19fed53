-- Bad values for allot's settings (docs/settings.md): 22023, a message that
-- names the parameter and the value, and the setting keeps its old value.
-- The range bounds are not pinned here (only that the value is named).
--
-- The harness runs this file in a fresh database with pgtap and allot
-- created.  The library is loaded by the first call below: before that,
-- allot.* settings are placeholders that PostgreSQL does not validate.
BEGIN;
SELECT plan(17);

SELECT is(allot.expire_assignments('2026-01-01 00:00:00+00'), 0::bigint,
          'a first call loads the library');

SELECT throws_ok($$SET allot.repeat_threshold = 'NaN'$$, '22023',
                 'invalid value for parameter "allot.repeat_threshold": "NaN"',
                 'repeat_threshold NaN');
SELECT throws_ok($$SET allot.repeat_threshold = -1$$, '22023', NULL, 'repeat_threshold -1: 22023');
SELECT throws_matching($$SET allot.repeat_threshold = -1$$,
                       '^-1 is outside the valid range for parameter "allot\.repeat_threshold"',
                       'repeat_threshold -1: the message names the value');
SELECT is(current_setting('allot.repeat_threshold'), '0.75', 'repeat_threshold keeps its value');

SELECT throws_ok($$SET allot.repeat_upper = 'Infinity'$$, '22023', NULL, 'repeat_upper Infinity: 22023');
SELECT throws_matching($$SET allot.repeat_upper = 'Infinity'$$,
                       '^Infinity is outside the valid range for parameter "allot\.repeat_upper"',
                       'repeat_upper Infinity: the message names the value');
SELECT is(current_setting('allot.repeat_upper'), '0', 'repeat_upper keeps its value');

SELECT throws_ok($$SET allot.assignment_ttl = 0$$, '22023', NULL, 'assignment_ttl 0: 22023');
SELECT throws_matching($$SET allot.assignment_ttl = 0$$,
                       '^0 s is outside the valid range for parameter "allot\.assignment_ttl"',
                       'assignment_ttl 0: the message names the value');
SELECT throws_ok($$SET allot.assignment_ttl = '-5min'$$, '22023', NULL, 'assignment_ttl -5min: 22023');
SELECT throws_ok($$SET allot.assignment_ttl = 'forever'$$, '22023',
                 'invalid value for parameter "allot.assignment_ttl": "forever"',
                 'assignment_ttl forever');
SELECT is(current_setting('allot.assignment_ttl'), '2min', 'assignment_ttl keeps its value');

SELECT throws_ok($$SET allot.fairness = 'bogus'$$, '22023',
                 'invalid value for parameter "allot.fairness": "bogus"', 'fairness bogus');
SELECT is(current_setting('allot.fairness'), 'current', 'fairness keeps its value');

SELECT throws_ok($$SET allot.balance_engine_throughputs = 'maybe'$$, '22023',
                 'parameter "allot.balance_engine_throughputs" requires a Boolean value',
                 'balance_engine_throughputs maybe');

-- A misspelt allot.* setting is refused, not silently kept as a placeholder.
SELECT throws_ok($$SET allot.repeat_treshold = 0.5$$, '42602',
                 'invalid configuration parameter name "allot.repeat_treshold"',
                 'misspelt setting name');

SELECT * FROM finish();
ROLLBACK;
