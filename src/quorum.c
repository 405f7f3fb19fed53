/*
 * quorum.c: the decision of a replicated job (quorum.h has the rule).
 */
#include <string.h>

#include "quorum.h"

static bool
same_digest(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Distinct voices among the members valid-judged with digest d. */
static int
class_voices(const QuorumMember *m, int n, const char *d, const int *validated)
{
	int			voices = 0;

	for (int i = 0; i < n; i++)
	{
		bool		seen = false;

		if (m[i].state != MEMBER_DONE || m[i].verdict != 1 || validated[i] == 0 ||
			!same_digest(m[i].digest, d))
			continue;
		for (int k = 0; k < i && !seen; k++)
			seen = m[k].state == MEMBER_DONE && m[k].verdict == 1 && validated[k] != 0 &&
				same_digest(m[k].digest, d) && m[k].voice == m[i].voice;
		if (!seen)
			voices++;
	}
	return voices;
}

/* Distinct voices among the members decided valid, leaving one out. */
static int
valid_voices(const QuorumMember *m, int n, const int *validated, int leave_out)
{
	int			voices = 0;

	for (int i = 0; i < n; i++)
	{
		bool		seen = false;

		if (i == leave_out || validated[i] != 1)
			continue;
		for (int k = 0; k < i && !seen; k++)
			seen = k != leave_out && validated[k] == 1 && m[k].voice == m[i].voice;
		if (!seen)
			voices++;
	}
	return voices;
}

void
allot_quorum_judge(QuorumMember *m, int n, int judged, bool valid, const char *digest,
				   int min_quorum, int max_total_results, QuorumOutcome *out)
{
	int			canonical = -1;	/* a member of the decision, if decided */
	bool		pending = false;

	out->retry = false;
	out->decided = false;
	out->add_replica = false;
	for (int i = 0; i < n; i++)
	{
		out->validated[i] = m[i].validated;
		out->remove[i] = false;
		if (m[i].validated == 1 && canonical < 0)
			canonical = i;
	}
	/* A decision stands while min_quorum owners' results stand in it. */
	if (canonical >= 0 && valid_voices(m, n, out->validated, -1) < min_quorum)
		canonical = -1;
	m[judged].verdict = valid ? 1 : 0;
	m[judged].digest = digest;

	if (!valid)
	{
		out->validated[judged] = 0;
		out->retry = valid_voices(m, n, out->validated, judged) < min_quorum;
		out->decided = !out->retry;
		return;
	}

	if (canonical >= 0 && canonical != judged)
	{
		/* Decided already: the verdict is held to the decision. */
		out->validated[judged] = same_digest(digest, m[canonical].digest) ? 1 : 0;
		out->decided = true;
		return;
	}

	/* Not decided (or the judged member alone made the decision). */
	{
		int			best = -1,
					best_voices = 0;

		out->validated[judged] = ALLOT_UNKNOWN;
		for (int i = 0; i < n; i++)
		{
			int			v;

			if (m[i].state != MEMBER_DONE || m[i].verdict != 1 || out->validated[i] == 0)
				continue;
			v = class_voices(m, n, m[i].digest, out->validated);
			if (v >= min_quorum && v > best_voices)
			{
				best = i;
				best_voices = v;
			}
		}
		if (best >= 0)
		{
			out->decided = true;
			for (int i = 0; i < n; i++)
			{
				if (m[i].state == MEMBER_DONE && m[i].verdict == 1)
					out->validated[i] = same_digest(m[i].digest, m[best].digest) ? 1 : 0;
				else if (m[i].state == MEMBER_UNSENT && m[i].replica)
					out->remove[i] = true;
			}
			return;
		}
	}

	/* Undecided: wait for what is out, or ask another owner. */
	for (int i = 0; i < n; i++)
		if (m[i].state == MEMBER_UNSENT || m[i].state == MEMBER_IN_PROGRESS)
			pending = true;
	out->add_replica = !pending && n < max_total_results;
}
