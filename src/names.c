/*
 * names.c: names shown to people must show what they are (names.h), and
 * the SQL glue that holds allot's names to it: a row trigger on the tables
 * whose names the status views show, and allot.name_problem(), which front
 * ends and check_invariants() call.
 *
 * The characters refused are Unicode's controls (Cc), format characters
 * (Cf: bidirectional embeddings, overrides and isolates, zero-width space
 * and joiners, the byte-order mark, soft hyphen, tags), line and paragraph
 * separators (Zl, Zp), and the fillers that render as nothing.  A name with
 * U+202E shows its tail reversed to every visitor of a status page; one
 * with U+200B looks like another host's.  Variation selectors stay allowed:
 * emoji need them.
 */
#include "postgres.h"

#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/rel.h"

#include "names.h"

typedef struct HiddenRange
{
	uint32_t	first;
	uint32_t	last;
	const char *what;
} HiddenRange;

/* In code point order. */
static const HiddenRange hidden[] = {
	{0x0000, 0x001F, "a control character"},
	{0x007F, 0x009F, "a control character"},
	{0x00AD, 0x00AD, "a soft hyphen"},
	{0x034F, 0x034F, "a combining grapheme joiner"},
	{0x061C, 0x061C, "an Arabic letter mark"},
	{0x115F, 0x1160, "a Hangul filler"},
	{0x17B4, 0x17B5, "an invisible Khmer vowel"},
	{0x180E, 0x180E, "a Mongolian vowel separator"},
	{0x200B, 0x200B, "a zero-width space"},
	{0x200C, 0x200D, "a zero-width joiner or non-joiner"},
	{0x200E, 0x200F, "a left-to-right or right-to-left mark"},
	{0x2028, 0x2029, "a line or paragraph separator"},
	{0x202A, 0x202C, "a bidirectional embedding"},
	{0x202D, 0x202D, "a left-to-right override"},
	{0x202E, 0x202E, "a right-to-left override"},
	{0x2060, 0x2065, "a word joiner or invisible operator"},
	{0x2066, 0x2069, "a bidirectional isolate"},
	{0x206A, 0x206F, "a deprecated format character"},
	{0x3164, 0x3164, "a Hangul filler"},
	{0xFEFF, 0xFEFF, "a zero-width no-break space (byte-order mark)"},
	{0xFFA0, 0xFFA0, "a Hangul filler"},
	{0xFFF9, 0xFFFB, "an interlinear annotation character"},
	{0xFFFE, 0xFFFF, "a noncharacter"},
	{0x110BD, 0x110BD, "a Kaithi number sign"},
	{0x110CD, 0x110CD, "a Kaithi number sign"},
	{0x13430, 0x1343F, "an Egyptian hieroglyph format control"},
	{0x1BCA0, 0x1BCA3, "a shorthand format control"},
	{0x1D173, 0x1D17A, "a musical format control"},
	{0xE0000, 0xE007F, "a tag character"},
};

static const char *
hidden_what(uint32_t c)
{
	int			lo = 0,
				hi = (int) (sizeof(hidden) / sizeof(hidden[0])) - 1;

	/* Noncharacters U+nFFFE and U+nFFFF of every plane, and U+FDD0..FDEF. */
	if ((c & 0xFFFE) == 0xFFFE || (c >= 0xFDD0 && c <= 0xFDEF))
		return "a noncharacter";
	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (c < hidden[mid].first)
			hi = mid - 1;
		else if (c > hidden[mid].last)
			lo = mid + 1;
		else
			return hidden[mid].what;
	}
	return NULL;
}

/* One UTF-8 sequence at s (len bytes left): its length, or 0 if invalid. */
static int
utf8_decode(const unsigned char *s, int len, uint32_t *c)
{
	int			n;
	uint32_t	v;

	if (s[0] < 0x80)
	{
		*c = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
	{
		n = 2;
		v = s[0] & 0x1F;
	}
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
	{
		n = 3;
		v = s[0] & 0x0F;
	}
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
	{
		n = 4;
		v = s[0] & 0x07;
	}
	else
		return 0;
	if (n > len)
		return 0;
	for (int i = 1; i < n; i++)
	{
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
		(v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*c = v;
	return n;
}

bool
allot_name_hidden_char(const char *s, int len, int *position, uint32_t *codepoint,
					   const char **what)
{
	const unsigned char *u = (const unsigned char *) s;
	int			i = 0,
				pos = 0;

	while (i < len)
	{
		uint32_t	c;
		int			n = utf8_decode(u + i, len - i, &c);

		pos++;
		if (n == 0)
		{
			*position = pos;
			*codepoint = 0xFFFD;
			*what = "an invalid UTF-8 sequence";
			return true;
		}
		if ((*what = hidden_what(c)) != NULL)
		{
			*position = pos;
			*codepoint = c;
			return true;
		}
		i += n;
	}
	return false;
}

/*
 * The problem with a name, as a sentence, or NULL.  Outside UTF-8
 * databases only ASCII controls are looked for: other bytes have no agreed
 * meaning there.
 */
static char *
name_problem(const char *s, int len)
{
	int			position;
	uint32_t	c;
	const char *what;

	if (GetDatabaseEncoding() != PG_UTF8)
	{
		for (int i = 0; i < len; i++)
			if ((unsigned char) s[i] < 0x20 || s[i] == 0x7F)
				return psprintf("contains a control character (byte 0x%02X) at byte %d",
								(unsigned char) s[i], i + 1);
		return NULL;
	}
	if (!allot_name_hidden_char(s, len, &position, &c, &what))
		return NULL;
	return psprintf("contains %s (U+%04X) at character %d", what, (unsigned) c, position);
}

PG_FUNCTION_INFO_V1(allot_name_problem);

/* name_problem(name text) RETURNS text: NULL when the name may be shown. */
Datum
allot_name_problem(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	char	   *problem = name_problem(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));

	if (problem == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(problem));
}

static void
check_name(const char *kind, text *t)
{
	char	   *problem = name_problem(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));

	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s %s", kind, problem),
				 errhint("Names are shown to people: invisible characters, controls and bidirectional overrides are refused.")));
}

PG_FUNCTION_INFO_V1(allot_check_name);

/*
 * check_name(kind text, name text) RETURNS text: the name, or 22023 naming
 * what is wrong and where ("user name contains a right-to-left override
 * (U+202E) at character 5").  For front ends' own names (BOINC accounts).
 */
Datum
allot_check_name(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	check_name(PG_ARGISNULL(0) ? "name" : text_to_cstring(PG_GETARG_TEXT_PP(0)),
			   PG_GETARG_TEXT_PP(1));
	PG_RETURN_TEXT_P(PG_GETARG_TEXT_PP(1));
}

PG_FUNCTION_INFO_V1(allot_name_check_trigger);

/*
 * BEFORE INSERT OR UPDATE OF name ... FOR EACH ROW EXECUTE FUNCTION
 * allot.name_check_trigger('host name'): refuses a new name that
 * check_name refuses.  An unchanged name passes, so that a row written
 * before 0.6.0 can still be edited; check_invariants() lists such names.
 */
Datum
allot_name_check_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	HeapTuple	row;
	TupleDesc	desc;
	int			attnum;
	bool		isnull;
	Datum		name;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!TRIGGER_FIRED_BEFORE(td->tg_event) || td->tg_trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("allot_name_check_trigger() must be a BEFORE ROW trigger with one argument")));
	row = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;
	desc = RelationGetDescr(td->tg_relation);
	attnum = SPI_fnumber(desc, "name");
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("table \"%s\" has no column \"name\"",
						RelationGetRelationName(td->tg_relation))));
	name = heap_getattr(row, attnum, desc, &isnull);
	if (!isnull)
	{
		if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		{
			bool		oldnull;
			Datum		old = heap_getattr(td->tg_trigtuple, attnum, desc, &oldnull);

			if (!oldnull && datumIsEqual(old, name, false, -1))
				return PointerGetDatum(row);
		}
		check_name(td->tg_trigger->tgargs[0], DatumGetTextPP(name));
	}
	return PointerGetDatum(row);
}
