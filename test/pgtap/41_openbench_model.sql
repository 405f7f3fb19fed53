-- Differential test: allot's workload selection against a small model of
-- OpenBench's own code, over thousands of random farm states, in both
-- profiles.
--
-- The model (pg_temp.openbench) is written from OpenBench's
-- OpenBench/workloads/get_workload.py, not from allot's source:
--   default profile  the code of 2024-01-30/31 (commits 8842652..84db0e5),
--                    which the workload-assignment design text describes:
--                    ratio = threads / throughput, repeat when
--                    thread_sum > 0 and min_ratio / fair_ratio > 0.75;
--   2024 profile     the code from 2024-01-31 on (19bb5ce to today): the
--                    requester's own threads added to every ratio and once
--                    to fair, repeat when min_ratio / fair_ratio > 0.75 and
--                    this_ratio / fair_ratio < 1.25.
-- Both: capability (syzygy, noisy, threads with core odds and SPSA), the
-- highest priority, focus, focus-assigned machines counted only for focused
-- requesters, engine balancing, and ties by exact equality of ratios drawn
-- weighted by effective throughput.  Sums run in allot's candidate order
-- (priority, then id); OpenBench's runs by priority and live LLR, which only
-- a balanced farm's non-integer throughputs can tell apart.
--
-- For each state and profile, allot's explain_assignment must give the same
-- candidates, bit-identical ratios and fair ratio, the same repeat decision
-- and the same probabilities.  The one documented difference: allot treats
-- ratios within a relative 1e-9 of the lowest as ties, where OpenBench needs
-- exact equality; such states are counted, and allowed only when the extra
-- ties are within that distance.
--
-- Integers are kept small so that the quotients land exactly on 3/4 and 5/4
-- often; the test counts those boundary states and requires some of each.
-- The states come from setseed(), so a run is reproducible.  Each state is
-- its own transaction (the harness gives this file a database of its own).
SELECT plan(7);

-- ---------------------------------------------------------------------------
-- The model: what OpenBench's get_workload.py would make of the farm now, for
-- the requester, in a profile.  One row per candidate.
CREATE FUNCTION pg_temp.openbench(requester bigint, profile text, balance boolean)
RETURNS TABLE (workload_id bigint, counted float8, effective_tp float8, is_last boolean,
               ratio float8, fair float8, min_ratio float8,
               min_over_fair float8, last_over_fair float8, repeated boolean,
               probability float8)
LANGUAGE plpgsql AS $f$
DECLARE
    me          allot.host;
    options     allot.workload[];
    top         int;
    has_focus   boolean := false;
    ids         bigint[] := '{}';
    tps         float8[] := '{}';
    threads     float8[] := '{}';
    ratios      float8[] := '{}';
    engines     text[] := '{}';
    w           allot.workload;
    machine     record;
    n           int;
    k           int;
    own         float8;
    thread_sum  float8 := 0;
    tp_sum      float8 := 0;
    lowest      float8;
    fair_       float8;
    last_index  int;
    repeat_     boolean := false;
    tie_sum     float8 := 0;
BEGIN
    SELECT * INTO me FROM allot.host h WHERE h.id = requester;
    own := CASE WHEN profile = '2024' THEN me.threads ELSE 0 END;

    -- Step 1: what the machine can run, then the highest priority, then focus.
    options := array(SELECT t FROM allot.workload t
                      WHERE t.state = 'active' AND t.app_id IS NULL AND pg_temp.runs(me, t)
                      ORDER BY t.priority DESC, t.id);
    IF cardinality(options) = 0 THEN
        RETURN;
    END IF;
    top := (options[1]).priority;
    FOREACH w IN ARRAY options LOOP
        has_focus := has_focus OR (w.priority = top AND w.engine = ANY (me.focus));
    END LOOP;
    FOREACH w IN ARRAY options LOOP
        IF w.priority = top AND (NOT has_focus OR w.engine = ANY (me.focus)) THEN
            ids := ids || w.id;
            engines := engines || w.engine;
            tps := tps || w.throughput;
            threads := threads || 0::float8;
        END IF;
    END LOOP;
    n := cardinality(ids);

    -- Step 2: machines other than ours on a candidate; a machine on one of
    -- its own focus engines counts only when we are focus-assigned too.
    FOR machine IN SELECT h.id, h.threads, h.focus, a.workload_id
                     FROM allot.host h JOIN allot.assignment a ON a.host_id = h.id LOOP
        k := array_position(ids, machine.workload_id);
        IF machine.id <> requester AND k IS NOT NULL
           AND (has_focus OR NOT (engines[k] = ANY (machine.focus))) THEN
            threads[k] := threads[k] + machine.threads;
        END IF;
    END LOOP;

    -- Steps 3 and 4.
    FOR k IN 1..n LOOP
        IF balance THEN
            tps[k] := tps[k] / (SELECT count(*) FROM unnest(engines) e WHERE e = engines[k]);
        END IF;
        ratios := ratios || (threads[k] + own) / tps[k];
        IF lowest IS NULL OR ratios[k] < lowest THEN
            lowest := ratios[k];
        END IF;
        thread_sum := thread_sum + threads[k];
        tp_sum := tp_sum + tps[k];
        IF ids[k] = me.last_workload_id THEN
            last_index := k;
        END IF;
    END LOOP;
    -- Step 5.
    thread_sum := thread_sum + own;
    fair_ := thread_sum / tp_sum;

    -- Step 6.
    IF last_index IS NOT NULL THEN
        IF profile = '2024' THEN
            repeat_ := lowest / fair_ > 0.75 AND ratios[last_index] / fair_ < 1.25;
        ELSE
            repeat_ := thread_sum > 0 AND lowest / fair_ > 0.75;
        END IF;
    END IF;

    -- Step 7: exact ties, weighted by effective throughput.
    FOR k IN 1..n LOOP
        IF ratios[k] = lowest THEN
            tie_sum := tie_sum + tps[k];
        END IF;
    END LOOP;
    FOR k IN 1..n LOOP
        workload_id := ids[k];
        counted := threads[k];
        effective_tp := tps[k];
        is_last := k IS NOT DISTINCT FROM last_index;
        ratio := ratios[k];
        fair := fair_;
        min_ratio := lowest;
        min_over_fair := CASE WHEN fair_ > 0 THEN lowest / fair_ END;
        last_over_fair := CASE WHEN fair_ > 0 AND last_index IS NOT NULL
                               THEN ratios[last_index] / fair_ END;
        repeated := repeat_;
        probability := CASE WHEN repeat_ THEN (k = last_index)::int::float8
                            WHEN ratios[k] = lowest THEN tps[k] / tie_sum
                            ELSE 0 END;
        RETURN NEXT;
    END LOOP;
END
$f$;

-- OpenBench's filter_valid_workloads for one workload: syzygy, noisy,
-- valid_hardware_assignment.  (Engines, OS and compilers are the client's
-- "supported" list; the states below have no engine rows.)
CREATE FUNCTION pg_temp.runs(me allot.host, w allot.workload) RETURNS boolean
LANGUAGE plpgsql AS $f$
BEGIN
    RETURN w.syzygy <= me.syzygy_max
       AND NOT (me.noisy AND w.time_based)
       AND (CASE WHEN w.mode = 'games' THEN 1 ELSE 2 END) * greatest(w.dev_threads, w.base_threads)
           <= CASE WHEN coalesce(me.physical_cores, me.threads) < me.threads
                        AND w.dev_threads <> w.base_threads
                   THEN me.threads / 2 ELSE me.threads END;
END
$f$;

-- A random element of an array.
CREATE FUNCTION pg_temp.pick(a anyarray) RETURNS anyelement LANGUAGE plpgsql AS $f$
BEGIN
    RETURN a[1 + floor(random() * cardinality(a))::int];
END
$f$;

-- ---------------------------------------------------------------------------
-- A random farm: up to 5 workloads on engines A, B, C (workloads 1 to 5 stay,
-- the unused ones finished: one statement, one cache invalidation), up to 10
-- other hosts mostly assigned (as their own request would have left them,
-- focus flag included), and requester 100 with a last workload and maybe an
-- assignment.
INSERT INTO allot.workload (id, engine) SELECT i, 'A' FROM generate_series(1, 5) i;
CREATE FUNCTION pg_temp.random_farm() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
    nw int := pg_temp.pick('{1,2,2,2,3,3,4,5}'::int[]);
    nh int := floor(random() * 11)::int;
BEGIN
    DELETE FROM allot.assignment;
    DELETE FROM allot.host;
    UPDATE allot.workload
       SET engine = pg_temp.pick('{A,A,B,C}'::text[]),
           priority = pg_temp.pick('{0,0,0,0,0,1}'::int[]),
           throughput = pg_temp.pick('{1,2,3,4,5,6,8,10,12,15,20,1000}'::int[]),
           state = CASE WHEN id > nw THEN 'finished'
                        ELSE pg_temp.pick('{active,active,active,active,active,active,active,paused}'::text[]) END,
           dev_threads = pg_temp.pick('{1,1,1,1,1,1,2,4}'::int[]),
           base_threads = pg_temp.pick('{1,1,1,1,1,1,2}'::int[]),
           syzygy = pg_temp.pick('{0,0,0,5,6}'::int[]),
           time_based = random() < 0.5,
           mode = pg_temp.pick('{games,games,games,spsa_single}'::text[]);
    INSERT INTO allot.host (id, threads, focus)
    SELECT i, pg_temp.pick('{1,1,2,3,4,5,6,8,9,12,15,16,27}'::int[]),
           pg_temp.pick('{"{}","{}","{}","{}","{}","{A}","{B}","{A,C}"}'::text[])::text[]
      FROM generate_series(1, nh) i;
    INSERT INTO allot.host (id, threads, syzygy_max, noisy, focus, last_workload_id)
    VALUES (100, pg_temp.pick('{1,1,1,2,4,8,16}'::int[]), pg_temp.pick('{0,5,6,6}'::int[]),
            random() < 0.15, pg_temp.pick('{"{}","{}","{}","{}","{}","{A}","{B}"}'::text[])::text[],
            CASE WHEN random() < 0.85 THEN 1 + floor(random() * nw)::int END);
    UPDATE allot.host SET physical_cores = threads / 2 WHERE id = 100 AND threads > 1 AND random() < 0.3;
    -- The others on a random workload, the requester maybe on its last one.
    INSERT INTO allot.assignment (host_id, workload_id, threads, focus, assigned_at, seen_at)
    SELECT h.id, w.id, h.threads, w.engine = ANY (h.focus),
           '2026-01-01 00:00:00+00', '2026-01-01 00:00:00+00'
      FROM (SELECT h.*, CASE WHEN h.id = 100 THEN h.last_workload_id
                             ELSE 1 + floor(random() * nw)::int END AS w
              FROM allot.host h
             WHERE CASE WHEN h.id = 100 THEN random() < 0.5 ELSE random() < 0.85 END) h
      JOIN allot.workload w ON w.id = h.w;
END
$f$;

-- Random integers almost never land exactly on a bound, so some farms are
-- steered onto one: in the profile given, one or two more hosts are put on
-- candidates so that the lowest candidate's ratio is exactly 3/4 of fair,
-- or the last workload's exactly 5/4, as fractions.  With throughput sums B
-- and b for the workload, other counted threads S, the requester's own
-- threads o (0 in the default profile) and q/4 the bound, the workload needs
-- t threads with (t + o) / b = q/4 x (S + t + o) / B, that is
-- t = (q b (S + o) - 4 B o) / (4 B - q b); a host of x threads on another
-- candidate makes S + x, until t is a whole number.  Whether the float
-- quotients then come out at, above or below the bound is what is tested.
-- Returns the bound aimed at, or NULL when none could be reached.
CREATE TEMP TABLE steer_candidates AS
SELECT * FROM pg_temp.openbench(100, 'default', false) WITH NO DATA;
CREATE FUNCTION pg_temp.steer(profile text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    own      float8 := CASE WHEN profile = '2024' THEN (SELECT threads FROM allot.host WHERE id = 100) ELSE 0 END;
    target   record;
    other    record;
    big_b    float8;
    s_all    float8;
    q        int;
    d        float8;
    rhs      float8;
BEGIN
    DELETE FROM steer_candidates;
    INSERT INTO steer_candidates SELECT * FROM pg_temp.openbench(100, profile, false);
    SELECT sum(effective_tp), sum(counted) INTO big_b, s_all FROM steer_candidates;
    IF big_b IS NULL THEN
        RETURN NULL;
    END IF;
    q := 3;
    IF profile = '2024' AND random() < 0.8 THEN
        SELECT * INTO target FROM steer_candidates WHERE is_last;
        IF target IS NOT NULL THEN
            q := 5;
        END IF;
    END IF;
    IF q = 3 THEN
        SELECT * INTO target FROM steer_candidates ORDER BY random() LIMIT 1;
    END IF;
    SELECT * INTO other FROM steer_candidates
     WHERE workload_id <> target.workload_id ORDER BY random() LIMIT 1;
    d := 4 * big_b - q * target.effective_tp;
    -- A lone candidate is always exactly fair.
    IF other IS NULL OR d <= 0 THEN
        RETURN NULL;
    END IF;
    FOR x IN 0..500 LOOP
        rhs := q * target.effective_tp * (s_all - target.counted + x + own) - 4 * big_b * own;
        IF rhs >= 0 AND rhs::bigint % d::bigint = 0 AND rhs / d >= target.counted THEN
            IF x > 0 THEN
                INSERT INTO allot.host (id, threads) VALUES (51, x);
                INSERT INTO allot.assignment (host_id, workload_id, threads, focus, assigned_at, seen_at)
                VALUES (51, other.workload_id, x, false, '2026-01-01 00:00:00+00', '2026-01-01 00:00:00+00');
            END IF;
            IF rhs / d > target.counted THEN
                INSERT INTO allot.host (id, threads) VALUES (50, (rhs / d - target.counted)::int);
                INSERT INTO allot.assignment (host_id, workload_id, threads, focus, assigned_at, seen_at)
                VALUES (50, target.workload_id, (rhs / d - target.counted)::int, false,
                        '2026-01-01 00:00:00+00', '2026-01-01 00:00:00+00');
            END IF;
            RETURN CASE q WHEN 3 THEN 'lower' ELSE 'upper' END;
        END IF;
    END LOOP;
    RETURN NULL;
END
$f$;

-- ---------------------------------------------------------------------------
-- Run: each state under both profiles.  A disagreement is kept with the
-- state's number, to show in the diagnostics.
CREATE TEMP TABLE outcome (state int, profile text, balance boolean, agree boolean,
                           epsilon_tie boolean, repeated boolean, steered text,
                           product_differs boolean, detail text, assign_detail text);
DO $$
DECLARE
    balance   boolean;
    m         record;
    profile   text;
    ok        boolean;
    odds_differ boolean;
    extra_tie boolean;
    other     boolean;
    detail    text;
    rep       boolean;
    steered   text;
    steered_profile text;
    product   boolean;
    drawable  bigint[];
    a_w       bigint;
    a_rep     boolean;
    a_detail  text;
BEGIN
    PERFORM setseed(0.4213);
    FOR s IN 1..1500 LOOP
        PERFORM pg_temp.random_farm();
        balance := random() < 0.3;
        steered := NULL;
        steered_profile := pg_temp.pick('{default,2024}'::text[]);
        IF NOT balance AND random() < 0.7 THEN
            PERFORM set_config('allot.count_requester', (steered_profile = '2024')::text, false);
            steered := pg_temp.steer(steered_profile);
        END IF;
        PERFORM set_config('allot.balance_engine_throughputs', balance::text, false);
        FOREACH profile IN ARRAY '{default,2024}'::text[] LOOP
            PERFORM set_config('allot.count_requester', (profile = '2024')::text, false);
            PERFORM set_config('allot.repeat_upper', CASE WHEN profile = '2024' THEN '1.25' ELSE '0' END, false);
            ok := true; odds_differ := false; extra_tie := false; other := false;
            detail := NULL; rep := false; product := NULL; drawable := '{}';
            FOR m IN
                SELECT o.*, e.candidate, e.ratio AS a_ratio, e.fair_ratio AS a_fair,
                       e.probability AS a_p, e.reason
                  FROM pg_temp.openbench(100, profile, balance) o
                  FULL JOIN (SELECT * FROM allot.explain_assignment(100, '2026-01-01 00:00:00+00')
                              WHERE candidate) e ON e.workload_id = o.workload_id
            LOOP
                rep := coalesce(m.repeated, false);
                IF m.a_p > 0 THEN
                    drawable := drawable || m.workload_id;
                END IF;
                -- What allot 0.4.0 decided: products, and >= in the default profile.
                IF m.is_last THEN
                    product := CASE WHEN profile = '2024'
                                    THEN m.min_ratio > 0.75 * m.fair AND m.ratio < 1.25 * m.fair
                                    ELSE m.min_ratio >= 0.75 * m.fair END;
                END IF;
                IF m.workload_id IS NULL OR m.candidate IS NULL THEN
                    ok := false;
                    detail := 'candidates differ';
                ELSIF m.ratio IS DISTINCT FROM m.a_ratio OR m.fair IS DISTINCT FROM m.a_fair THEN
                    ok := false;
                    detail := format('W%s ratio %s fair %s, allot %s and %s',
                                     m.workload_id, m.ratio, m.fair, m.a_ratio, m.a_fair);
                ELSIF abs(m.probability - m.a_p) > 1e-12 THEN
                    odds_differ := true;
                    detail := format('W%s probability %s, allot %s (%s); model repeated %s',
                                     m.workload_id, m.probability, m.a_p, m.reason, m.repeated);
                    -- A tie only allot's 1e-9 tolerance makes: a draw in both,
                    -- the extra member within 1e-9 of the lowest ratio.
                    IF NOT m.repeated AND m.probability = 0 AND m.a_p > 0
                       AND m.a_ratio <= m.min_ratio * (1 + 1e-9) THEN
                        extra_tie := true;
                    ELSIF m.repeated OR m.a_p = 0 THEN
                        other := true;
                    END IF;
                END IF;
            END LOOP;
            IF odds_differ AND (other OR NOT extra_tie) THEN
                ok := false;
            END IF;
            -- assign_workload's own path (sums and a copy of the usage)
            -- must choose as explain_assignment's: the last workload when it
            -- repeats, else one it gives a chance; undone after.
            a_w := NULL; a_rep := NULL; a_detail := NULL;
            BEGIN
                SELECT a.workload_id, a.repeated INTO a_w, a_rep
                  FROM allot.assign_workload(100, '2026-01-01 00:00:00+00', seed => s) a;
                RAISE EXCEPTION 'undo';
            EXCEPTION WHEN raise_exception THEN
                NULL;
            END;
            IF rep AND NOT (a_rep AND a_w = (SELECT last_workload_id FROM allot.host WHERE id = 100)) THEN
                a_detail := format('explain repeats, assign_workload gave W%s (repeated %s)', a_w, a_rep);
            ELSIF NOT rep AND (coalesce(a_rep, false) OR
                               CASE WHEN cardinality(drawable) = 0 THEN a_w IS NOT NULL
                                    ELSE a_w IS NULL OR a_w <> ALL (drawable) END) THEN
                a_detail := format('explain draws among %s, assign_workload gave W%s (repeated %s)',
                                   drawable, a_w, a_rep);
            END IF;
            INSERT INTO outcome VALUES (s, profile, balance, ok, ok AND extra_tie, rep,
                                        CASE WHEN profile = steered_profile THEN steered END,
                                        product IS DISTINCT FROM rep AND product IS NOT NULL,
                                        CASE WHEN NOT ok THEN detail END, a_detail);
        END LOOP;
        COMMIT;
    END LOOP;
END $$;

SELECT is((SELECT count(*) FROM outcome), 3000::bigint, '1,500 random farms, each in both profiles');
SELECT is(array(SELECT format('state %s, %s profile%s: %s', state, profile,
                              CASE WHEN balance THEN ', balanced' ELSE '' END, detail)
                  FROM outcome WHERE NOT agree ORDER BY state, profile LIMIT 10),
          '{}'::text[], 'allot agrees with the model of OpenBench on every state');
SELECT is(array(SELECT format('state %s, %s profile%s: %s', state, profile,
                              CASE WHEN balance THEN ', balanced' ELSE '' END, assign_detail)
                  FROM outcome WHERE assign_detail IS NOT NULL ORDER BY state, profile LIMIT 10),
          '{}'::text[], 'assign_workload chooses as explain_assignment does on every state, bounds included');
SELECT cmp_ok((SELECT count(*) FROM outcome WHERE repeated AND agree), '>=', 300::bigint,
              'the repeat rule decided often enough to be tested');
SELECT ok((SELECT count(*) FILTER (WHERE steered = 'lower') >= 100
               AND count(*) FILTER (WHERE steered = 'upper') >= 10 FROM outcome),
          'many states lie exactly on a bound, 3/4 or 5/4 as fractions');
SELECT cmp_ok((SELECT count(*) FROM outcome WHERE product_differs AND agree), '>=', 50::bigint,
              'among them, states where allot 0.4.0''s products would have decided otherwise');
SELECT cmp_ok((SELECT count(*) FROM outcome WHERE epsilon_tie), '<=', 30::bigint,
              'ties that only allot''s 1e-9 tolerance makes are rare');
SELECT diag(format('%s states: %s repeats; %s steered onto 3/4, %s onto 5/4; %s decided '
                   'otherwise by 0.4.0''s rule; %s ties only within 1e-9',
                   count(*), count(*) FILTER (WHERE repeated),
                   count(*) FILTER (WHERE steered = 'lower'), count(*) FILTER (WHERE steered = 'upper'),
                   count(*) FILTER (WHERE product_differs), count(*) FILTER (WHERE epsilon_tie)))
  FROM outcome;

SELECT * FROM finish();
