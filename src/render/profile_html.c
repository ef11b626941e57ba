/*
 * profile_html.c — the flame-graph page (see profile_html.h).
 *
 * C writes the static parts (title, how it was sampled, the bucket table)
 * as escaped HTML and the stacks as JSON; the script at the end builds the
 * call tree from the stacks and draws it as SVG.  The script never puts a
 * string from the data into markup: it uses textContent and attributes.
 */
#include "render/profile_html.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/profile_buckets.h"
#include "base/units.h"
#include "render/json.h"
#include "render/profile_folded.h"
#include "render/svg_chart.h"

#define LABEL_MAX 4096

/* Colours of the buckets, in table order (then round again). */
static const char *const bucket_palette[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6", "#d37295",
};
#define NPALETTE (sizeof(bucket_palette) / sizeof(*bucket_palette))

/* A stack's flags in the page: bit 0 truncated, bit 1 an idle wait (left out unless asked). */
#define STACK_TRUNCATED 1
#define STACK_IDLE 2

static int stack_flags(const struct vt_profile *p, const struct vt_prof_stack *s)
{
	bool idle = s->state != VT_PROF_RUNNING && s->state != VT_PROF_RUNNABLE &&
		    vt_wait_class_idle(vt_bucket_wait_class(p, s));

	return (s->truncated ? STACK_TRUNCATED : 0) | (idle ? STACK_IDLE : 0);
}

/* What the graph counts: "samples" unless the caller weighs its stacks by something else. */
static const char *unit_of(const struct vt_profile_html *r)
{
	return r->unit ? r->unit : "samples";
}

static bool unit_is_bytes(const struct vt_profile_html *r)
{
	return r->unit && !strcmp(r->unit, "bytes");
}

/*
 * The locations and the kept stacks (root first) of one profile as JSON,
 * each stack weighing weight[its row] (NULL: its count); *total counts
 * what the graph shows at first, idle waits left out as the tables leave
 * them out, *idle what it leaves out.
 */
static json_t *profile_json(const struct vt_profile *p, unsigned states, const uint64_t *weight,
			    const int32_t *loc_bucket, size_t nbuckets, const char *name,
			    uint64_t *total, uint64_t *idle)
{
	json_t *o = json_object(), *locs = json_array(), *stacks = json_array();
	char label[LABEL_MAX];
	bool ok = o && locs && stacks;

	*total = *idle = 0;
	for (uint32_t i = 0; ok && i < p->nlocs; i++) {
		const struct vt_prof_loc *l = &p->locs[i];
		const struct vt_prof_func *f = l->func < p->nfuncs ? &p->funcs[l->func] : NULL;
		int32_t b = loc_bucket ? loc_bucket[i] : -1;

		if (b < 0 || (size_t)b >= nbuckets)
			b = -1;
		char where[LABEL_MAX + 16] = "";
		if (f && f->file)   /* where the function is defined, for its tooltip */
			snprintf(where, sizeof(where), "%s:%u", vt_profile_str(p, f->file), f->line);
		vt_profile_loc_label(p, i, label, sizeof(label));
		ok = json_array_append_new(locs, json_pack("[o o b i o b]", vt_json_text(label),
							   vt_json_text(f ? vt_profile_str(p, f->module) : ""),
							   l->kernel, (int)b, vt_json_text(where),
							   l->inlined_into != 0)) == 0;
	}
	for (uint32_t i = 0; ok && i < p->nstacks; i++) {
		const struct vt_prof_stack *s = &p->stacks[i];
		const uint32_t *locs_of = vt_profile_stack_locs(p, s);
		uint64_t w = weight ? weight[i] : s->count;
		int flags;
		json_t *a;

		if (!w || !vt_prof_states_has(states, s->state))
			continue;
		flags = stack_flags(p, s);
		a = json_pack("[I i]", (json_int_t)w, flags);
		ok = a != NULL;
		for (uint32_t d = s->depth; ok && d-- > 0;)
			ok = json_array_append_new(a, json_integer(locs_of[d] < p->nlocs ?
								   (json_int_t)locs_of[d] : -1)) == 0;
		if (!ok) {
			json_decref(a);
			break;
		}
		ok = json_array_append_new(stacks, a) == 0;   /* consumes a, also on failure */
		*(flags & STACK_IDLE ? idle : total) += w;
	}
	if (ok && json_object_set_new(o, "name", vt_json_text(name)) == 0 &&
	    json_object_set_new(o, "total", json_integer((json_int_t)*total)) == 0 &&
	    json_object_set_new(o, "idle", json_integer((json_int_t)*idle)) == 0 &&
	    json_object_set_new(o, "locs", locs) == 0 && json_object_set_new(o, "stacks", stacks) == 0)
		return o;
	json_decref(o);
	json_decref(locs);
	json_decref(stacks);
	return NULL;
}

static json_t *page_json(const struct vt_profile_html *r, uint64_t *total, uint64_t *idle,
			 uint64_t *base_total)
{
	json_t *root = json_object(), *pal = json_array(), *names = json_array(), *prof, *base = NULL;
	bool ok = root && pal && names;
	uint64_t base_idle;

	*base_total = 0;
	for (size_t i = 0; ok && i < NPALETTE; i++)
		ok = json_array_append_new(pal, json_string(bucket_palette[i])) == 0;
	for (size_t i = 0; ok && i < r->nbuckets; i++)
		ok = json_array_append_new(names, vt_json_text(r->buckets[i].name)) == 0;
	prof = ok ? profile_json(r->profile, r->states, r->stack_weight, r->loc_bucket, r->nbuckets,
				 r->label ? r->label : "this profile", total, idle) : NULL;
	if (prof && r->base)
		base = profile_json(r->base, r->base_states, NULL, NULL, 0,
				    r->base_label ? r->base_label : "base", base_total, &base_idle);
	ok = prof && (!r->base || base);
	/* the unit only when it is not samples: a profile's page stays as it was */
	if (ok && r->unit)
		ok = json_object_set_new(root, "unit", vt_json_text(r->unit)) == 0;
	if (ok && json_object_set_new(root, "color", json_string(r->base ? "diff" :
								 r->loc_bucket ? "bucket" : "module")) == 0 &&
	    json_object_set_new(root, "palette", pal) == 0 &&
	    json_object_set_new(root, "buckets", names) == 0 &&
	    json_object_set_new(root, "profile", prof) == 0 &&
	    json_object_set_new(root, "base", base ? base : json_null()) == 0)
		return root;
	json_decref(root);
	json_decref(pal);
	json_decref(names);
	json_decref(prof);
	json_decref(base);
	return NULL;
}

/* The JSON text with '<', '>' and '&' as \u escapes: nothing in it can end the script block. */
static void write_script_json(FILE *out, const char *json)
{
	for (const char *c = json; *c; c++) {
		switch (*c) {
		case '<': fputs("\\u003c", out); break;
		case '>': fputs("\\u003e", out); break;
		case '&': fputs("\\u0026", out); break;
		default: fputc(*c, out);
		}
	}
}

static const char page_css[] =
	"<style>\n"
	"body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;color:#222;margin:16px}\n"
	"h1{font-size:20px;margin:0 0 4px}.meta{color:#555;margin:0 0 10px}.meta span{margin-right:14px}\n"
	".wrap{display:flex;gap:18px;align-items:flex-start;flex-wrap:wrap}\n"
	".graph{flex:1 1 720px;min-width:480px}.side{flex:0 0 auto}\n"
	".bar{display:flex;gap:8px;align-items:center;margin:0 0 6px}\n"
	".bar input{flex:0 1 260px;padding:3px 6px}#matched{color:#7a1f7a}\n"
	"#fg{display:block;width:100%;background:#fafafa;border:1px solid #ddd}\n"
	"#fg g{cursor:pointer}#fg text{font:11px ui-monospace,monospace;fill:#111;pointer-events:none}\n"
	"#fg rect{stroke:#fff;stroke-width:0.5}#fg .faded rect{opacity:0.45}\n"
	"#detail{font:12px ui-monospace,monospace;min-height:1.4em;color:#333;white-space:pre}\n"
	"table{border-collapse:collapse}th,td{padding:3px 10px;border-bottom:1px solid #e4e4e4;"
	"text-align:left}th{border-bottom:1px solid #999}td.n,th.n{text-align:right;"
	"font-variant-numeric:tabular-nums}\n"
	".sw{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}\n"
	".small{color:#666;font-size:12px}\n"
	"</style>\n";

/* The drawing: builds the call tree from the JSON and draws it as SVG (root at the bottom). */
static const char page_js[] =
	"<script>\n"
	"(function(){'use strict';try{\n"
	"var D=JSON.parse(document.getElementById('vt-data').textContent);\n"
	"var NS='http://www.w3.org/2000/svg',RH=17,W=1200,U=D.unit||'samples';\n"
	"var showIdle=false;\n"
	"function tree(P){var root={n:'all',m:'',k:false,b:-1,v:0,c:new Map(),p:null,d:0};\n"
	" var trunc=['[truncated]','',false,-1,'',false],unk=['[unknown]','',false,-1,'',false];\n"
	" P.stacks.forEach(function(s){if((s[1]&2)&&!showIdle)return;var cnt=s[0],node=root;root.v+=cnt;\n"
	"  var frames=[];if(s[1]&1)frames.push(trunc);\n"
	"  for(var i=2;i<s.length;i++)frames.push(s[i]>=0&&s[i]<P.locs.length?P.locs[s[i]]:unk);\n"
	"  if(s.length==2)frames.push(unk);\n"
	"  frames.forEach(function(f){var key=f[0]+'\\u0000'+f[1]+(f[2]?'\\u0000k':'');\n"
	"   var ch=node.c.get(key);\n"
	"   if(!ch){ch={n:f[0],m:f[1],k:f[2],b:f[3],w:f[4],i:f[5],v:0,c:new Map(),p:node,d:node.d+1,key:key};"
	"node.c.set(key,ch);}\n"
	"   ch.v+=cnt;node=ch;});});\n"
	" return root;}\n"
	"var root,total,maxd,btotal,maxdelta;\n"
	"function build(){root=tree(D.profile);total=root.v||1;maxd=0;\n"
	"(function walk(n){if(n.d>maxd)maxd=n.d;n.kids=Array.from(n.c.values()).sort(function(a,b){"
	"return a.n<b.n?-1:a.n>b.n?1:(a.key<b.key?-1:1);});n.kids.forEach(walk);})(root);\n"
	"btotal=1;\n"
	"if(D.base){var broot=tree(D.base);btotal=broot.v||1;\n"
	" (function match(n,b){n.bv=b?b.v:0;n.kids.forEach(function(k){match(k,b?b.c.get(k.key):null);});})"
	"(root,broot);}\n"
	"maxdelta=0;\n"
	"if(D.base)(function md(n){var d=Math.abs(n.v/total-n.bv/btotal);if(d>maxdelta)maxdelta=d;"
	"n.kids.forEach(md);})(root);}\n"
	"build();\n"
	"function hash(s){var h=2166136261;for(var i=0;i<s.length;i++){h^=s.charCodeAt(i);"
	"h=Math.imul(h,16777619);}return h>>>0;}\n"
	"function color(n){\n"
	" if(n.p===null)return '#c8c8c8';\n"
	" if(D.color==='diff'){var d=n.v/total-n.bv/btotal,t=maxdelta>0?Math.min(1,Math.abs(d)/maxdelta):0;\n"
	"  var c=Math.round(235-175*t);if(Math.abs(d)<1e-9)return 'rgb(220,220,220)';\n"
	"  return d>0?'rgb(240,'+c+','+c+')':'rgb('+c+','+c+',240)';}\n"
	" if(D.color==='bucket')return n.b>=0?D.palette[n.b%D.palette.length]:'#dcdcdc';\n"
	" if(n.n==='[truncated]'||n.n==='[unknown]')return '#bbbbbb';\n"
	" if(n.k)return 'hsl('+(20+hash(n.n)%20)+',85%,'+(58+hash(n.n)%10)+'%)';\n"
	" var h=hash(n.m||'?');return 'hsl('+(h%360)+',55%,'+(62+hash(n.n)%14)+'%)';}\n"
	"function pct(x){return (100*x).toFixed(x<0.001?3:2)+'%';}\n"
	/* bytes as vt_fmt_size writes them (base/units.c) */
	"function size(b){var K=1024,M=K*K,G=M*K;return b<K?b.toFixed(0)+' B':b<M?(b/K).toFixed(b<10*K?1:0)+"
	"' KiB':b<10*G?(b/M).toFixed(b<10*M?2:b<100*M?1:0)+' MiB':(b/G).toFixed(b<100*G?1:0)+' GiB';}\n"
	"function amount(v){return U==='bytes'?size(v):v+' '+U;}\n"
	"function of(m,t){return U==='bytes'?size(m)+' of '+size(t):m+' of '+t+' '+U;}\n"
	"function describe(n){var s=n.n+(n.k?' [kernel]':'')+(n.i?' (inlined)':'')+(n.m?'  ('+n.m+')':'')"
	"+(n.w?'\\ndefined at '+n.w:'')+'\\n'+amount(n.v)+', '"
	"+pct(n.v/total);\n"
	" if(D.base){var a=n.bv/btotal,b=n.v/total;s+='\\n'+D.base.name+' '+pct(a)+' \\u2192 '+D.profile.name+"
	"' '+pct(b)+' ('+(b>=a?'+':'')+(100*(b-a)).toFixed(2)+' pts)';}\n"
	" return s;}\n"
	"var svg=document.getElementById('fg'),detail=document.getElementById('detail');\n"
	"var zoom=root,re=null;\n"
	"function matches(n){return re!==null&&n.n.toLowerCase().indexOf(re)>=0;}\n"
	"function el(tag,attrs){var e=document.createElementNS(NS,tag);for(var k in attrs)"
	"e.setAttribute(k,attrs[k]);return e;}\n"
	"function draw(){\n"
	" while(svg.firstChild)svg.removeChild(svg.firstChild);\n"
	" W=Math.max(320,Math.floor(svg.getBoundingClientRect().width)||1200);\n"
	" var H=(maxd+1)*RH+4;svg.setAttribute('viewBox','0 0 '+W+' '+H);svg.setAttribute('height',H);\n"
	" var drawn=0;\n"
	" function frame(n,x,w,faded){\n"
	"  var g=el('g',{'class':faded?'faded':'f'});\n"
	"  var t=document.createElementNS(NS,'title');t.textContent=describe(n);g.appendChild(t);\n"
	"  g.appendChild(el('rect',{x:x.toFixed(2),y:H-(n.d+1)*RH,width:Math.max(0.5,w-0.5).toFixed(2),"
	"height:RH-1,fill:matches(n)?'#d040d0':color(n)}));\n"
	"  if(w>28){var tx=el('text',{x:(x+3).toFixed(2),y:H-n.d*RH-5});var max=Math.floor((w-6)/6.6);\n"
	"   tx.textContent=n.n.length>max?n.n.slice(0,Math.max(0,max-2))+'..':n.n;g.appendChild(tx);}\n"
	"  g.addEventListener('click',function(){zoom=n;draw();});\n"
	"  g.addEventListener('mouseover',function(){detail.textContent=describe(n).replace(/\\n/g,'  |  ');});\n"
	"  svg.appendChild(g);drawn++;}\n"
	" for(var a=zoom.p;a;a=a.p)frame(a,0,W,true);\n"
	" (function place(n,x,w){frame(n,x,w,false);var cx=x;\n"
	"  n.kids.forEach(function(k){var kw=w*k.v/n.v;if(kw>=0.4)place(k,cx,kw);cx+=kw;});})(zoom,0,W);\n"
	" document.body.setAttribute('data-frames',String(drawn));\n"
	" document.getElementById('reset').disabled=zoom===root;}\n"
	"function search(){var q=document.getElementById('q').value.trim().toLowerCase();\n"
	" re=q.length?q:null;var m=0;\n"
	" if(re!==null)(function sum(n){if(n.p!==null&&matches(n)){m+=n.v;return;}n.kids.forEach(sum);})(root);\n"
	" document.getElementById('matched').textContent=re===null?'':'matched: '+pct(m/total)+' ('+"
	"of(m,root.v)+')';\n"
	" draw();}\n"
	"var q=document.getElementById('q');q.addEventListener('input',search);\n"
	"if(location.hash.indexOf('#q=')===0)q.value=decodeURIComponent(location.hash.slice(3));\n"
	"window.addEventListener('resize',function(){draw();});\n"
	"document.getElementById('reset').addEventListener('click',function(){zoom=root;draw();});\n"
	"var idleBox=document.getElementById('idle');\n"
	"if(idleBox)idleBox.addEventListener('change',function(){showIdle=idleBox.checked;build();zoom=root;"
	"search();});\n"
	"document.querySelectorAll('.sw[data-b]').forEach(function(s){"
	"s.style.background=D.palette[Number(s.getAttribute('data-b'))%D.palette.length];});\n"
	"search();\n"
	"}catch(e){document.body.setAttribute('data-error',String(e));throw e;}\n"
	"})();\n"
	"</script>\n";

static void write_meta(FILE *out, const struct vt_profile_html *r, uint64_t total, uint64_t idle,
		       uint64_t base_total)
{
	const struct vt_prof_meta *m = &r->profile->meta;

	fputs("<p class=\"meta\"><span>", out);
	if (r->source) {
		vt_html_text(out, r->source);
	} else {
		fprintf(out, "pid %d (", (int)m->pid);
		vt_html_text(out, m->comm);
		fputs(")", out);
	}
	fputs("</span>", out);
	if (r->about) {
		for (const char *const *a = r->about; *a; a++) {
			fputs("<span>", out);
			vt_html_text(out, *a);
			fputs("</span>", out);
		}
	} else {
		fputs("<span>", out);
		vt_html_text(out, m->method[0] ? m->method : "?");
		fprintf(out, " at %g Hz", m->hz);
		if (m->wall)
			fprintf(out, ", blocked threads looked at %.3g times a second (each look %.3g samples "
				"of 1/%g s)", m->wall_hz, m->hz / m->wall_hz, m->hz);
		fprintf(out, " for %.1f s</span><span>%" PRIu64 " samples, %" PRIu64 " lost</span>",
			m->duration_s, m->samples, m->lost);
	}
	if (unit_is_bytes(r)) {
		char size[32];

		fprintf(out, "<span>graph: %s (%" PRIu64 " bytes)", vt_fmt_bytes(total, size, sizeof(size)),
			total);
	} else {
		fprintf(out, "<span>graph: %" PRIu64 " ", total);
		vt_html_text(out, unit_of(r));
	}
	if (!r->about)
		fprintf(out, " (%s%s)", r->states == VT_PROF_STATES_ALL ? "wall: running, runnable and waiting" :
					r->states == VT_PROF_STATES_CPU ? "on CPU" : "selected states",
			idle ? "; idle waits left out, as the tables leave them" : "");
	fputs("</span>", out);
	if (m->exited && !r->about)
		fputs("<span>the target exited: the profile so far</span>", out);
	if (r->base) {
		fputs("<span>differential: ", out);
		vt_html_text(out, r->label ? r->label : "this profile");
		fputs(" against ", out);
		vt_html_text(out, r->base_label ? r->base_label : "base");
		fprintf(out, " (%" PRIu64 " samples); red grew, blue shrank</span>", base_total);
	}
	fputs("</p>\n", out);
	if (r->lead) {
		fputs("<p>", out);
		vt_html_text(out, r->lead);
		fputs("</p>\n", out);
	}
}

static void write_buckets(FILE *out, const struct vt_profile_html *r)
{
	if (!r->nbuckets)
		return;
	fputs("<div class=\"side\">\n<table>\n<tr><th>", out);
	vt_html_text(out, r->table_key ? r->table_key : "bucket");
	fputs("</th><th class=\"n\">share</th><th class=\"n\">", out);
	vt_html_text(out, unit_of(r));
	fputs("</th></tr>\n", out);
	for (size_t i = 0; i < r->nbuckets; i++) {
		const struct vt_html_bucket_row *b = &r->buckets[i];

		fputs("<tr><td>", out);
		if (r->loc_bucket && !r->base)
			fprintf(out, "<span class=\"sw\" data-b=\"%zu\"></span>", i);
		vt_html_text(out, b->name);
		fprintf(out, "</td><td class=\"n\">%.1f%%", 100 * b->share);
		if (b->ci >= 0 && isfinite(b->ci))
			fprintf(out, " &plusmn; %.1f", 100 * b->ci);
		if (unit_is_bytes(r)) {
			char size[32];

			fprintf(out, "</td><td class=\"n\">%s</td></tr>\n",
				vt_fmt_bytes(b->samples, size, sizeof(size)));
		} else {
			fprintf(out, "</td><td class=\"n\">%" PRIu64 "</td></tr>\n", b->samples);
		}
	}
	if (r->table_note) {
		fputs("</table>\n<p class=\"small\">", out);
		vt_html_text(out, r->table_note);
		fputs("</p>\n</div>\n", out);
		return;
	}
	/* what the table counts, in the graph's words: a wall table beside an on-CPU label misled */
	fprintf(out, "</table>\n<p class=\"small\">share of %s by top of stack%s</p>\n</div>\n",
		r->states == VT_PROF_STATES_CPU ? "on-CPU samples" :
		r->states == VT_PROF_STATES_ALL ? "wall samples (running, runnable and waiting)" :
						  "the samples counted",
		r->states == VT_PROF_STATES_CPU ? "" : "; idle waits left out");
}

int vt_profile_html_write(FILE *out, const struct vt_profile_html *r, struct vt_err *err)
{
	const struct vt_prof_meta *m = &r->profile->meta;
	uint64_t total, idle, base_total;
	json_t *data = page_json(r, &total, &idle, &base_total);
	char *json, title[160];

	if (!data)
		return vt_err_set(err, VT_E_NOMEM, 0, "html: %u stacks", r->profile->nstacks);
	json = json_dumps(data, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	json_decref(data);
	if (!json)
		return vt_err_set(err, VT_E_NOMEM, 0, "html: %u stacks", r->profile->nstacks);
	if (r->title)
		snprintf(title, sizeof(title), "%s", r->title);
	else
		snprintf(title, sizeof(title), "vitals profile %d (%s)", (int)m->pid, m->comm);

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", out);
	vt_html_text(out, title);
	fputs("</title>\n", out);
	fputs(page_css, out);
	fputs("</head>\n<body>\n<h1>", out);
	vt_html_text(out, title);
	fputs("</h1>\n", out);
	write_meta(out, r, total, idle, base_total);
	fputs("<div class=\"wrap\">\n<div class=\"graph\">\n<div class=\"bar\">"
	      "<input id=\"q\" type=\"search\" placeholder=\"search frames\" aria-label=\"search frames\">"
	      "<button id=\"reset\" type=\"button\">reset zoom</button>", out);
	if (idle)
		fprintf(out, "<label><input id=\"idle\" type=\"checkbox\"> show idle waits (%" PRIu64
			" samples)</label>", idle);
	fputs("<span id=\"matched\"></span></div>\n"
	      "<svg id=\"fg\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
	      "aria-label=\"flame graph\"></svg>\n<div id=\"detail\"></div>\n"
	      "<p class=\"small\">root at the bottom; a frame's width is its share of the ", out);
	vt_html_text(out, unit_of(r));
	fputs("; click to zoom</p>\n<noscript>the flame graph needs JavaScript</noscript>\n</div>\n", out);
	write_buckets(out, r);
	fputs("</div>\n<script id=\"vt-data\" type=\"application/json\">", out);
	write_script_json(out, json);
	fputs("</script>\n", out);
	fputs(page_js, out);
	fputs("</body>\n</html>\n", out);
	free(json);
	if (fflush(out) != 0 || ferror(out))
		return vt_err_set(err, VT_E_IO, errno, "cannot write the html page");
	return VT_OK;
}
