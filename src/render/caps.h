/*
 * caps.h (render) — views of vitals caps: text and JSON ("vitals.caps",
 * docs/json.md), both of one struct vt_caps_report (sample/caps.h).
 */
#ifndef VT_RENDER_CAPS_H
#define VT_RENDER_CAPS_H

#include <stdio.h>

#include "sample/caps.h"

int vt_render_caps_text(FILE *out, const struct vt_caps_report *r);
int vt_render_caps_json(FILE *out, const struct vt_caps_report *r);

#endif
