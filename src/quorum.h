/*
 * quorum.h: when a replicated job is decided (issue 30, quorum
 * replication, BOINC's min_quorum and its validator's comparison).
 *
 * A job and its replicas are the members of one group (allot.job rows: the
 * job, and those whose replica_of names it).  The project's validator
 * judges each successful member (validate_job): valid or not, and what it
 * says (a digest; NULL is a class of its own).  The rule, applied at each
 * verdict:
 *
 *   invalid    the member is invalid; if without it the job is not decided
 *              (fewer than min_quorum valid members), its sending failed
 *              and it is sent again to another owner (job_retry.h), as a
 *              lone job found invalid always was
 *   valid      if the job is decided already, the member is valid when its
 *              digest is the decision's, else invalid; if not, the valid
 *              members are grouped by digest, and the first class with
 *              min_quorum distinct owners (the most owners, then the
 *              lowest id) decides it: its members are valid, every other
 *              valid-judged member invalid, and replicas still unsent are
 *              not needed (removed)
 *   undecided  with nothing left in progress or unsent, the owners
 *              disagree: another replica is made, up to the job's
 *              max_total_results members; beyond, the job stays undecided
 *              (nothing credited, nothing learnt) for the operator
 *
 * With min_quorum 1 a valid verdict decides the job at once and an invalid
 * one sends it again: allot's behaviour before replication.
 *
 * Pure logic: no SPI, no allocation, no PostgreSQL headers.
 */
#ifndef ALLOT_QUORUM_H
#define ALLOT_QUORUM_H

#include <stdbool.h>
#include <stdint.h>

typedef enum MemberState
{
	MEMBER_UNSENT,
	MEMBER_IN_PROGRESS,
	MEMBER_DONE,
	MEMBER_ENDED				/* error or timed out: given up */
} MemberState;

/* Tri-state: the column's NULL, false and true. */
#define ALLOT_UNKNOWN (-1)

typedef struct QuorumMember
{
	int64_t		id;
	int64_t		voice;			/* of the host it was sent to (done members) */
	bool		replica;		/* a replica row (replica_of set), not the job */
	MemberState state;
	int			verdict;		/* ALLOT_UNKNOWN, 0, 1 */
	const char *digest;			/* NULL: a class of its own */
	int			validated;		/* ALLOT_UNKNOWN, 0, 1 */
} QuorumMember;

typedef struct QuorumOutcome
{
	/* per member, in the members' order */
	int		   *validated;		/* the new decision (ALLOT_UNKNOWN: none) */
	bool	   *remove;			/* an unsent replica no longer needed */
	bool		retry;			/* the judged member's sending failed */
	bool		decided;
	bool		add_replica;	/* the owners disagree: one more */
} QuorumOutcome;

/*
 * The verdict (valid, digest) on members[judged], which must be done;
 * members[judged].verdict and .digest are set to it.  out's arrays must
 * hold n entries.
 */
extern void allot_quorum_judge(QuorumMember *members, int n, int judged, bool valid,
							   const char *digest, int min_quorum, int max_total_results,
							   QuorumOutcome *out);

#endif							/* ALLOT_QUORUM_H */
