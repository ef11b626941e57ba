/*
 * sparkline.c — a series squeezed into one line of text: eight Unicode
 * blocks (▁..█) or, for terminals without UTF-8, the ASCII ramp ".:-=+*#%@".
 * A space is a cell with nothing known in it (all NAN), so a gap is never
 * mistaken for the lowest value.  A series that moves by no more than the
 * caller's resolution (what its printed figures can show) is a flat line of
 * the lowest cell: noise below the last printed digit is not drawn as a
 * shape, and a constant does not float at mid-height.
 */
#include "render/soak.h"

#include <math.h>
#include <string.h>

static const char *const blocks[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
static const char ramp[] = ".:-=+*#%@";

size_t vt_sparkline(char *out, size_t cap, const double *v, size_t n, size_t width, bool utf8,
		    double resolution)
{
	size_t levels = utf8 ? sizeof(blocks) / sizeof(blocks[0]) : sizeof(ramp) - 1;
	size_t cell_bytes = utf8 ? 3 : 1, cells, c, i, o = 0;
	double lo = INFINITY, hi = -INFINITY;

	if (!out || cap == 0)
		return 0;
	out[0] = '\0';
	if (!v || n == 0 || width == 0)
		return 0;
	cells = n < width ? n : width;
	if (cells > (cap - 1) / cell_bytes)
		cells = (cap - 1) / cell_bytes;
	for (i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	for (c = 0; c < cells; c++) {
		/* cell c averages v[first, last) */
		size_t first = c * n / cells, last = (c + 1) * n / cells, k = 0;
		double sum = 0;
		size_t level;

		for (i = first; i < last; i++)
			if (isfinite(v[i])) {
				sum += v[i];
				k++;
			}
		if (!k || !isfinite(lo) || !isfinite(hi)) {
			out[o++] = ' ';
			continue;
		}
		if (hi - lo > resolution) {
			double f = (sum / (double)k - lo) / (hi - lo);
			level = (size_t)lround(f * (double)(levels - 1));
			if (level >= levels)
				level = levels - 1;
		} else {
			level = 0;               /* flat: a line along the floor */
		}
		if (utf8) {
			memcpy(out + o, blocks[level], 3);
			o += 3;
		} else {
			out[o++] = ramp[level];
		}
	}
	out[o] = '\0';
	return cells;
}
