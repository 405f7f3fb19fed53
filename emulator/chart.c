/*
 * chart.c: the shares over time as an SVG chart, written by hand.
 *
 * One solid line per workload (its share of the work done in each bucket,
 * drawn at the bucket's middle) and a dashed line of the same colour (its
 * fair share).  A line breaks where the workload had no share to draw: a
 * bucket where nothing was done, or where it was neither eligible nor did
 * anything.
 *
 * Workloads of equal fair share would draw their dashed lines on top of
 * each other, the last hiding the others (fleet_week's climate and protein,
 * both 25%).  So workloads whose fair lines lie within a few pixels of each
 * other in most buckets share one dash period, each drawing its dashes in
 * its own slot of it: the lines alternate their colours along the way.
 */
#include "emulator.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define WIDTH 960
#define HEIGHT 500
#define LEFT 80
#define RIGHT 230
#define TOP 50
#define BOTTOM 70

static const char *const COLOURS[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"
};

static void
put_escaped(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s)
		{
			case '&':
				fputs("&amp;", f);
				break;
			case '<':
				fputs("&lt;", f);
				break;
			case '>':
				fputs("&gt;", f);
				break;
			case '"':
				fputs("&quot;", f);
				break;
			default:
				fputc(*s, f);
		}
}

/* A round step giving about `want` intervals over span: 1, 2 or 5 x 10^k. */
static double
nice_step(double span, int want)
{
	double		raw = span / want;
	double		mag = pow(10, floor(log10(raw)));
	double		r = raw / mag;

	return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
}

/* The dashes of a fair line, one of n that coincide, in slot k of n. */
#define DASH 8

typedef struct FairDash
{
	int			slot;			/* k: which DASH-long slot of the period it draws in */
	int			of;				/* n: how many lines share the period */
} FairDash;

/*
 * Whether the fair lines of workloads a and b coincide: in most buckets
 * where either is drawn, both are, within 3 pixels of each other.
 */
static bool
fair_lines_coincide(Emulator *em, int a, int b, double ymax)
{
	const Metrics *m = &em->m;
	int			nw = em->scn.nworkloads;
	double		plot_h = HEIGHT - TOP - BOTTOM;
	int			drawn = 0,
				together = 0;

	for (int bk = 0; bk < m->nbuckets; bk++)
	{
		double		fa = m->fair[(size_t) bk * nw + a];
		double		fb = m->fair[(size_t) bk * nw + b];

		if (fa <= 0 && fb <= 0)
			continue;
		drawn++;
		if (fa > 0 && fb > 0 && fabs(fa - fb) / ymax * plot_h < 3)
			together++;
	}
	return drawn > 0 && 2 * together > drawn;
}

/*
 * Give each workload its slot: the workloads whose fair lines coincide
 * with an earlier one's join that one's group, in file order.
 */
static void
assign_dashes(Emulator *em, double ymax, FairDash *dash)
{
	int			nw = em->scn.nworkloads;
	int			group[MAX_WORKLOADS];

	for (int w = 0; w < nw; w++)
	{
		group[w] = w;
		for (int x = 0; x < w; x++)
			if (group[x] == x && fair_lines_coincide(em, x, w, ymax))
			{
				group[w] = x;
				break;
			}
		dash[w].slot = 0;
		for (int x = 0; x < w; x++)
			if (group[x] == group[w])
				dash[w].slot++;
	}
	for (int w = 0; w < nw; w++)
	{
		dash[w].of = 0;
		for (int x = 0; x < nw; x++)
			if (group[x] == group[w])
				dash[w].of++;
	}
}

/* The stroke-dasharray and -dashoffset attributes of a fair line. */
static void
put_dash(FILE *f, FairDash d)
{
	if (d.of <= 1)
		fputs(" stroke-dasharray=\"6,4\"", f);
	else
		fprintf(f, " stroke-dasharray=\"%d,%d\" stroke-dashoffset=\"%d\"",
				DASH, DASH * (d.of - 1), DASH * ((d.of - d.slot) % d.of));
}

/* Draw one series: share (fair = false) or fair share, of workload w. */
static void
draw_series(FILE *f, Emulator *em, int w, bool fair, double ymax, FairDash dash)
{
	const Metrics *m = &em->m;
	int			nw = em->scn.nworkloads;
	double		plot_w = WIDTH - LEFT - RIGHT;
	double		plot_h = HEIGHT - TOP - BOTTOM;
	bool		open = false;

	for (int b = 0; b < m->nbuckets; b++)
	{
		double		total = 0;
		double		work = m->work[(size_t) b * nw + w];
		double		fs = m->fair[(size_t) b * nw + w];
		double		y;
		double		mid = fmin((b + 0.5) * em->scn.bucket, em->scn.length);

		for (int x = 0; x < nw; x++)
			total += m->work[(size_t) b * nw + x];
		if (total <= 0 || (work <= 0 && fs <= 0))
		{
			if (open)
				fputs("\"/>\n", f);
			open = false;
			continue;
		}
		y = fair ? fs : work / total;
		if (!open)
		{
			fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"",
					COLOURS[w % 10], fair ? "1.5" : "2");
			if (fair)
				put_dash(f, dash);
			fputs(" points=\"", f);
		}
		open = true;
		fprintf(f, "%.1f,%.1f ", LEFT + mid / em->scn.length * plot_w,
				TOP + plot_h - fmin(y, ymax) / ymax * plot_h);
	}
	if (open)
		fputs("\"/>\n", f);
}

bool
chart_write(Emulator *em, const char *path)
{
	const Scenario *s = &em->scn;
	const Metrics *m = &em->m;
	int			nw = s->nworkloads;
	FILE	   *f = fopen(path, "w");
	double		plot_w = WIDTH - LEFT - RIGHT;
	double		plot_h = HEIGHT - TOP - BOTTOM;
	bool		in_days = s->length > 3 * 86400;
	double		xscale = in_days ? 86400 : 3600;
	double		xspan = s->length / xscale;
	double		xstep = nice_step(xspan, 8);
	double		ymax = 0;
	double		ystep;
	const char *fairness = scenario_setting(s, "allot.fairness");
	FairDash	dash[MAX_WORKLOADS];
	bool		shared_dashes = false;

	if (f == NULL)
	{
		perror(path);
		return false;
	}
	/* The y range: the largest share or fair share, rounded up. */
	for (int b = 0; b < m->nbuckets; b++)
	{
		double		total = 0;

		for (int w = 0; w < nw; w++)
			total += m->work[(size_t) b * nw + w];
		for (int w = 0; w < nw; w++)
		{
			ymax = fmax(ymax, m->fair[(size_t) b * nw + w]);
			if (total > 0)
				ymax = fmax(ymax, m->work[(size_t) b * nw + w] / total);
		}
	}
	ystep = ymax > 0.5 ? 0.1 : 0.05;
	ymax = fmin(1, fmax(ystep, ceil(ymax / ystep - 1e-9) * ystep));
	assign_dashes(em, ymax, dash);
	for (int w = 0; w < nw; w++)
		shared_dashes |= dash[w].of > 1;

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
			WIDTH, HEIGHT, WIDTH, HEIGHT);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, HEIGHT);
	fputs("<text x=\"80\" y=\"24\" font-size=\"15\" font-weight=\"bold\">", f);
	put_escaped(f, s->name);
	fprintf(f, ": share of %s per workload (solid) and fair share (dashed)</text>\n",
			s->job_farm ? "FLOPs done" : "threads");
	fprintf(f, "<text x=\"80\" y=\"40\" fill=\"#555\">%d hosts, fairness %s, %g h buckets</text>\n",
			em->nhosts, fairness ? fairness : "current", s->bucket / 3600);

	/* Grid, ticks and labels. */
	for (double y = 0; y <= ymax + 1e-9; y += ystep)
	{
		double		py = TOP + plot_h - y / ymax * plot_h;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
				LEFT, py, LEFT + plot_w, py);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f%%</text>\n",
				LEFT - 6, py + 4, 100 * y);
	}
	for (double x = 0; x <= xspan + 1e-9; x += xstep)
	{
		double		px = LEFT + x / xspan * plot_w;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
				px, TOP, px, TOP + plot_h);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
				px, TOP + plot_h + 18, x);
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
			LEFT, TOP + plot_h, LEFT + plot_w, TOP + plot_h);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n",
			LEFT, TOP, LEFT, TOP + plot_h);
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">virtual time (%s)</text>\n",
			LEFT + plot_w / 2, HEIGHT - 25, in_days ? "days" : "hours");
	fprintf(f, "<text transform=\"translate(22,%.1f) rotate(-90)\" text-anchor=\"middle\">share</text>\n",
			TOP + plot_h / 2);

	for (int w = 0; w < nw; w++)
	{
		draw_series(f, em, w, true, ymax, dash[w]);
		draw_series(f, em, w, false, ymax, dash[w]);
	}

	/* Legend. */
	for (int w = 0; w < nw; w++)
	{
		double		ly = TOP + 10 + 20 * w;
		double		lx = WIDTH - RIGHT + 20;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
				lx, ly, lx + 18, ly, COLOURS[w % 10]);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n",
				lx + 22, ly, lx + 40, ly, COLOURS[w % 10]);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", lx + 46, ly + 4);
		put_escaped(f, s->workloads[w].name);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">solid: share, dashed: fair</text>\n",
			WIDTH - RIGHT + 20, TOP + 20 + 20 * nw);
	if (shared_dashes)
		fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">equal fair shares: dashes</text>\n"
				"<text x=\"%d\" y=\"%d\" fill=\"#555\">of each colour in turn</text>\n",
				WIDTH - RIGHT + 20, TOP + 40 + 20 * nw, WIDTH - RIGHT + 20, TOP + 56 + 20 * nw);
	fputs("</svg>\n", f);
	return fclose(f) == 0;
}
