/*
 * quorum_test.c: unit tests of src/quorum.c (when a replicated job is
 * decided) and src/reliability.h (which hosts run jobs alone), without
 * PostgreSQL.  Prints TAP.  Build and run: make -C test/unit.
 */
#include <stdbool.h>
#include <stddef.h>

#include "quorum.h"
#include "reliability.h"
#include "tap.h"

#define MAXM 16

static QuorumMember m[MAXM];
static int	validated[MAXM];
static bool removed[MAXM];
static QuorumOutcome out = {validated, removed, false, false, false};

static int
member(int n, int64_t voice, bool replica, MemberState state)
{
	m[n].id = n + 1;
	m[n].voice = voice;
	m[n].replica = replica;
	m[n].state = state;
	m[n].verdict = ALLOT_UNKNOWN;
	m[n].digest = NULL;
	m[n].validated = ALLOT_UNKNOWN;
	return n + 1;
}

/* Apply the outcome, as validate_job writes it. */
static void
apply(int n)
{
	for (int i = 0; i < n; i++)
		m[i].validated = validated[i];
}

/* Quorum 1, a lone job: valid decides it; invalid sends it again. */
static bool
test_lone_job(void)
{
	int			n = member(0, 7, false, MEMBER_DONE);
	bool		good;

	allot_quorum_judge(m, n, 0, true, NULL, 1, 10, &out);
	good = out.decided && validated[0] == 1 && !out.retry && !out.add_replica;
	apply(n);
	allot_quorum_judge(m, n, 0, false, NULL, 1, 10, &out);
	return good && out.retry && validated[0] == 0;
}

/* Quorum 2: the first valid verdict waits, the second of another owner with
 * the same digest decides both. */
static bool
test_two_agree(void)
{
	int			n = member(0, 1, false, MEMBER_DONE);
	bool		good;

	n = member(n, 2, true, MEMBER_IN_PROGRESS);
	allot_quorum_judge(m, n, 0, true, "abc", 2, 10, &out);
	good = !out.decided && validated[0] == ALLOT_UNKNOWN && !out.add_replica;
	apply(n);
	m[1].state = MEMBER_DONE;
	allot_quorum_judge(m, n, 1, true, "abc", 2, 10, &out);
	return good && out.decided && validated[0] == 1 && validated[1] == 1;
}

/* Two results of one owner are one voice: no quorum. */
static bool
test_one_owner_no_quorum(void)
{
	int			n = member(0, 5, false, MEMBER_DONE);

	n = member(n, 5, true, MEMBER_DONE);
	allot_quorum_judge(m, n, 0, true, "x", 2, 10, &out);
	apply(n);
	allot_quorum_judge(m, n, 1, true, "x", 2, 10, &out);
	return !out.decided && validated[0] == ALLOT_UNKNOWN && validated[1] == ALLOT_UNKNOWN &&
		out.add_replica;
}

/* Disagreement: another replica; the third agreeing with the first decides,
 * and the second is invalid. */
static bool
test_disagree_then_decide(void)
{
	int			n = member(0, 1, false, MEMBER_DONE);
	bool		good;

	n = member(n, 2, true, MEMBER_DONE);
	allot_quorum_judge(m, n, 0, true, "good", 2, 3, &out);
	apply(n);
	allot_quorum_judge(m, n, 1, true, "bad", 2, 3, &out);
	good = !out.decided && out.add_replica;
	apply(n);
	n = member(n, 3, true, MEMBER_DONE);
	allot_quorum_judge(m, n, 2, true, "good", 2, 3, &out);
	good = good && out.decided && validated[0] == 1 && validated[1] == 0 && validated[2] == 1;
	apply(n);
	/* at max_total_results: no fourth member */
	m[0].validated = m[1].validated = m[2].validated = ALLOT_UNKNOWN;
	m[2].digest = "other";
	allot_quorum_judge(m, n, 2, true, "other", 2, 3, &out);
	return good && !out.decided && !out.add_replica;
}

/* An invalid result while the job is undecided is sent again; once the job
 * is decided, a late invalid or disagreeing result is just invalid. */
static bool
test_invalid(void)
{
	int			n = member(0, 1, false, MEMBER_DONE);
	bool		good;

	n = member(n, 2, true, MEMBER_DONE);
	n = member(n, 3, true, MEMBER_IN_PROGRESS);
	allot_quorum_judge(m, n, 1, false, NULL, 2, 10, &out);
	good = out.retry && validated[1] == 0;
	apply(n);
	m[1].state = MEMBER_UNSENT;
	m[1].validated = ALLOT_UNKNOWN;
	m[1].verdict = ALLOT_UNKNOWN;
	allot_quorum_judge(m, n, 0, true, "d", 2, 10, &out);
	apply(n);
	m[2].state = MEMBER_DONE;
	allot_quorum_judge(m, n, 2, true, "d", 2, 10, &out);
	/* decided by members 0 and 2: the unsent replica 1 is not needed */
	good = good && out.decided && validated[0] == 1 && validated[2] == 1 && removed[1];
	apply(n);
	m[1].state = MEMBER_DONE;
	allot_quorum_judge(m, n, 1, true, "e", 2, 10, &out);
	good = good && validated[1] == 0 && !out.retry;
	apply(n);
	allot_quorum_judge(m, n, 1, false, NULL, 2, 10, &out);
	return good && !out.retry && validated[1] == 0;
}

/* Trust: a vouched host is reliable; others after N consecutive valid
 * results with a low error rate; reliable hosts are spot-checked. */
static bool
test_reliability(void)
{
	TrustPolicy p = {10, 0.05, 0.9};
	HostTrust fresh = {false, 0, 0};
	HostTrust proven = {false, 10, 0.01};
	HostTrust erring = {false, 12, 0.2};
	HostTrust operator_host = {true, 0, 0};
	double		rate = 0;

	for (int i = 0; i < 3; i++)
		rate = allot_error_rate_after(rate, true);
	return allot_replicate_sending(&fresh, &p, 0.0) && allot_replicate_sending(&fresh, &p, 0.99) &&
		!allot_replicate_sending(&proven, &p, 0.5) && allot_replicate_sending(&proven, &p, 0.95) &&
		allot_replicate_sending(&erring, &p, 0.5) &&
		!allot_replicate_sending(&operator_host, &p, 0.1) &&
		rate > 0.1426 && rate < 0.1427;		/* 1 - 0.95^3 */
}

int
main(void)
{
	static const UnitTest tests[] = {
		{"quorum 1: a valid verdict decides a lone job, an invalid one sends it again", test_lone_job},
		{"quorum 2: two owners with the same digest decide the job", test_two_agree},
		{"two results of one owner are one voice: no quorum, another replica", test_one_owner_no_quorum},
		{"owners disagree: another replica, up to max_total_results; the agreeing pair decides", test_disagree_then_decide},
		{"an invalid result is sent again only while the job is undecided", test_invalid},
		{"reliability: vouched hosts, N consecutive valid results, error rate, spot checks", test_reliability},
	};

	return run_tests(tests, sizeof(tests) / sizeof(tests[0]));
}
