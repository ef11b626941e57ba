#!/usr/bin/env python3
"""dashboard_check.py — the checks of t0711 on contrib/grafana/vitals-dashboard.json.

  dashboard_check.py schema DASHBOARD
      the dashboard against the essentials of Grafana's documented JSON model
      for its schemaVersion (39: Grafana 10.3 to 11.x): no Grafana runs here.
  dashboard_check.py query PROMETHEUS_URL DASHBOARD EXPORTER_C EXPOSITION WINDOW
      every PromQL expression of the dashboard and of the rules Prometheus
      loaded (GET /api/v1/rules) asked of Prometheus (GET /api/v1/query): each
      must return data.  EXPORTER_C is src/serve/exporter.c (its family table
      says which names exist), EXPOSITION is a /metrics of the vitals serve
      Prometheus scraped (what this host can show), WINDOW replaces
      $__rate_interval.
Each prints one line per check and exits 1 when any failed.
"""
import json
import re
import sys
import urllib.parse
import urllib.request

SCHEMA_VERSION = 39          # Grafana 10.3 .. 11.x write this version
GRID_COLUMNS = 24
PANEL_TYPES = {"row", "timeseries", "stat", "table", "gauge", "bargauge", "text", "heatmap", "barchart",
               "piechart", "logs", "state-timeline", "status-history", "histogram", "nodeGraph"}
VARIABLE_TYPES = {"query", "datasource", "custom", "constant", "interval", "textbox", "adhoc"}
DS_VARIABLE = "${DS_PROMETHEUS}"

failures = []


def ok(what):
    print("ok - " + what)


def bad(what):
    print("not ok - " + what)
    failures.append(what)


def need(cond, what):
    (ok if cond else bad)(what)
    return cond


def typed(obj, key, types, where):
    """obj[key] exists and has one of types (bool is not an int here)."""
    v = obj.get(key) if isinstance(obj, dict) else None
    good = key in obj and isinstance(v, types) and not (isinstance(v, bool) and bool not in
                                                         (types if isinstance(types, tuple) else (types,)))
    if not good:
        bad("%s: %r is missing or not %s" % (where, key,
                                             "/".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))))
    return good


def all_panels(panels):
    for p in panels:
        yield p
        if p.get("type") == "row":
            yield from all_panels(p.get("panels", []))


def schema(path):
    d = json.load(open(path))
    n_bad = len(failures)
    for key, types in (("uid", str), ("title", str), ("schemaVersion", int), ("version", int),
                       ("time", dict), ("templating", dict), ("panels", list), ("annotations", dict),
                       ("editable", bool), ("tags", list)):
        typed(d, key, types, "dashboard")
    need(d.get("schemaVersion") == SCHEMA_VERSION, "schemaVersion is %d (Grafana 10.3-11.x)" % SCHEMA_VERSION)
    need(isinstance(d.get("uid"), str) and re.fullmatch(r"[A-Za-z0-9_-]{1,40}", d["uid"]) is not None,
         "uid is 1-40 characters of [A-Za-z0-9_-]")
    t = d.get("time", {})
    need(isinstance(t.get("from"), str) and isinstance(t.get("to"), str), "time has from and to")
    tl = d.get("templating", {}).get("list")
    if need(isinstance(tl, list), "templating.list is a list"):
        names = []
        for v in tl:
            where = "variable %s" % v.get("name")
            typed(v, "name", str, where)
            typed(v, "type", str, where)
            need(v.get("type") in VARIABLE_TYPES, "%s: type %r is a Grafana variable type" % (where, v.get("type")))
            names.append(v.get("name"))
            if v.get("type") == "query":
                need(v.get("datasource", {}).get("uid") == DS_VARIABLE,
                     "%s: its datasource is the %s variable" % (where, DS_VARIABLE))
                q = v.get("query")
                need(isinstance(q, (str, dict)) and (q if isinstance(q, str) else q.get("query")),
                     "%s: has a query" % where)
        need(len(names) == len(set(names)), "variable names are unique")
        ds = [v for v in tl if v.get("name") == "DS_PROMETHEUS"]
        need(len(ds) == 1 and ds[0].get("type") == "datasource" and ds[0].get("query") == "prometheus",
             "a datasource variable DS_PROMETHEUS of plugin prometheus")
        need({"instance", "target"} <= set(names), "variables instance and target")
    panels = d.get("panels", [])
    ids = []
    rects = []
    n_targets = 0
    for p in all_panels(panels):
        where = "panel %s (%s)" % (p.get("id"), p.get("title"))
        typed(p, "id", int, where)
        typed(p, "type", str, where)
        typed(p, "title", str, where)
        ids.append(p.get("id"))
        need(p.get("type") in PANEL_TYPES, "%s: type %r is a core panel type" % (where, p.get("type")))
        g = p.get("gridPos")
        if typed(p, "gridPos", dict, where) and all(typed(g, k, int, where + " gridPos") for k in "xywh"):
            need(g["w"] >= 1 and g["h"] >= 1 and g["x"] >= 0 and g["y"] >= 0 and g["x"] + g["w"] <= GRID_COLUMNS,
                 "%s: gridPos x %d + w %d within %d columns, h %d" % (where, g["x"], g["w"], GRID_COLUMNS, g["h"]))
            rects.append((where, g))
        if p.get("type") == "row":
            need(g.get("w") == GRID_COLUMNS and g.get("h") == 1, "%s: a row spans the width, 1 high" % where)
            typed(p, "collapsed", bool, where)
            typed(p, "panels", list, where)
            continue
        need(p.get("datasource") == {"type": "prometheus", "uid": DS_VARIABLE},
             "%s: datasource is {type prometheus, uid %s}" % (where, DS_VARIABLE))
        if typed(p, "targets", list, where):
            need(len(p["targets"]) > 0, "%s: has targets" % where)
            refs = []
            for tg in p["targets"]:
                n_targets += 1
                typed(tg, "refId", str, where + " target")
                typed(tg, "expr", str, where + " target")
                refs.append(tg.get("refId"))
                need(tg.get("datasource", DS_VARIABLE) in (DS_VARIABLE, {"type": "prometheus", "uid": DS_VARIABLE}),
                     "%s %s: datasource is the variable" % (where, tg.get("refId")))
                need(bool(tg.get("expr", "").strip()), "%s %s: expr not empty" % (where, tg.get("refId")))
            need(len(refs) == len(set(refs)), "%s: refIds unique" % where)
        fc = p.get("fieldConfig")
        if typed(p, "fieldConfig", dict, where):
            typed(fc, "defaults", dict, where + " fieldConfig")
            typed(fc, "overrides", list, where + " fieldConfig")
        typed(p, "options", dict, where)
    need(len(ids) == len(set(ids)), "panel ids are unique (%d panels)" % len(ids))
    overlaps = []
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            (wa, a), (wb, b) = rects[i], rects[j]
            if a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]:
                overlaps.append("%s / %s" % (wa, wb))
    need(not overlaps, "no two panels overlap" + (": " + "; ".join(overlaps) if overlaps else ""))
    print("# %d panels, %d queries, schemaVersion %s" % (len(ids), n_targets, d.get("schemaVersion")))
    return len(failures) == n_bad


# ---- the expressions -----------------------------------------------------------

def families(exporter_c):
    """Exported family names from exporter.c's table: counters get _total."""
    names = set()
    for m in re.finditer(r'\{\s*"([a-z0-9_:]+)",\s*VT_PROM_(GAUGE|COUNTER)', open(exporter_c).read()):
        names.add(m.group(1) + ("_total" if m.group(2) == "COUNTER" else ""))
    return names


PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool",
                "offset", "inf", "nan"}


def metric_names(expr):
    """Metric names an expression selects: identifiers not followed by '(' and not labels/keywords."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)            # no string contents
    e = re.sub(r'\{[^}]*\}', '{}', e)                         # no matchers
    e = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', '', e)
    e = re.sub(r'\[[^\]]*\]', '[]', e)                        # no ranges
    out = []
    for m in re.finditer(r'[A-Za-z_:][A-Za-z0-9_:]*', e):
        name, rest = m.group(0), e[m.end():].lstrip()
        if rest.startswith("(") or name.lower() in PROMQL_WORDS or re.fullmatch(r'\d+[smhdwy]', name):
            continue
        out.append(name)
    return out


COMPARISON = re.compile(r'(==|!=|>=|<=|>|<)(\s*bool)?')
SETOP = re.compile(r'\b(and|or|unless)\b')


def operands(expr):
    """Split a rule condition at its top-level set and comparison operators:
    the operands that select series (a bare number is no operand)."""
    parts, depth, cur, i, s = [], 0, "", 0, expr
    while i < len(s):
        c = s[i]
        if c == '"':
            j = i + 1
            while s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            cur += s[i:j + 1]
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if depth == 0:
            m = COMPARISON.match(s, i) or SETOP.match(s, i)
            if m and not (c == "=" and s[i:i + 2] != "=="):
                parts.append(cur)
                cur = ""
                i = m.end()
                continue
        cur += c
        i += 1
    parts.append(cur)
    return [p.strip() for p in parts if re.search(r'[A-Za-z_:][A-Za-z0-9_:]*', p.strip())]


# A family that this host cannot show (absent from the exposition for a
# reason of the host, not of vitals): its expressions are listed, not failed.
HOST_DEPENDENT = [
    (re.compile(r'vitals_cgroup_pressure_stall_seconds_total'), "vitals_cgroup_pressure_stall_seconds_total",
     "the target's cgroup has no PSI here (cgroup v1, or a kernel without PSI)"),
    (re.compile(r'vitals_cgroup_memory_max_bytes'), "vitals_cgroup_memory_max_bytes",
     "the target's cgroup has no memory limit here"),
    (re.compile(r'vitals_cgroup_memory_events_total\{[^}]*event="(high|low|oom)"'), None,
     "cgroup v1 has no memory.events low/high/oom (only max and oom_kill)"),
]


def host_excuse(expr, exposition):
    for rx, family, why in HOST_DEPENDENT:
        m = rx.search(expr)
        if not m:
            continue
        if family is not None and not re.search(r'^%s[{ ]' % family, exposition, re.M):
            return why
        if family is None and not re.search(r'^vitals_cgroup_memory_events_total\{[^}]*event="%s"' % m.group(1),
                                            exposition, re.M):
            return why
    return None


def ask(prom, expr):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            j = json.load(r)
    except urllib.error.HTTPError as e:
        j = json.load(e)
    return j


def query(prom, dash_path, exporter_c, exposition_path, window):
    d = json.load(open(dash_path))
    known = families(exporter_c)
    need(len(known) >= 30, "%d families read from %s's table" % (len(known), exporter_c))
    exposition = open(exposition_path).read()
    rules_known = set()
    checks = []   # (where, expr, legend, kind): kind "series" must return data, "condition" only parse
    for p in all_panels(d["panels"]):
        for tg in p.get("targets", []):
            e = tg["expr"]
            # Grafana's substitutions: every instance and target, a fixed rate window
            e = e.replace("$__rate_interval", window).replace("$instance", ".+").replace("$target", ".+")
            checks.append(("dashboard panel %d %r %s" % (p["id"], p["title"], tg["refId"]), e, tg.get("legendFormat", ""), "series"))
    rules = json.load(urllib.request.urlopen(prom + "/api/v1/rules", timeout=10))["data"]["groups"]
    n_rules = 0
    for g in rules:
        for r in g["rules"]:
            n_rules += 1
            name = r.get("name")
            need(r.get("health") == "ok", "rule %s: Prometheus evaluates it (health %s%s)" %
                 (name, r.get("health"), ", " + r["lastError"] if r.get("lastError") else ""))
            if r["type"] == "recording":
                rules_known.add(name)
                checks.append(("rule %s" % name, r["query"], "", "series"))
            else:
                checks.append(("alert %s" % name, r["query"], "", "condition"))
                for op in operands(r["query"]):
                    checks.append(("alert %s operand" % name, op, "", "series"))
    print("# %d rules loaded by Prometheus" % n_rules)
    empty, excused, n = [], [], 0
    for where, expr, legend, kind in checks:
        n += 1
        unknown = [m for m in metric_names(expr) if m not in known and m not in rules_known]
        need(not unknown, "%s: names only exported families or rules%s" % (where, " (unknown: %s)" % ", ".join(unknown) if unknown else ""))
        j = ask(prom, expr)
        if not need(j.get("status") == "success", "%s: Prometheus parses %s%s" % (where, expr, "" if j.get(
                "status") == "success" else " (%s)" % j.get("error"))):
            continue
        res = j["data"]["result"]
        if kind == "condition":
            print("# %s: %d series firing now (%s)" % (where, len(res) if isinstance(res, list) else 1, expr.replace("\n", " ")))
            continue
        if isinstance(res, list) and not res:
            why = host_excuse(expr, exposition)
            if why:
                excused.append("%s: %s" % (where, why))
                print("# not on this host - %s: %s (%s)" % (where, expr, why))
            else:
                empty.append("%s: %s" % (where, expr))
                bad("%s returns data: %s returned nothing" % (where, expr))
            continue
        ok("%s returns %d series: %s" % (where, len(res) if isinstance(res, list) else 1, expr))
        # the legend's {{label}}s are labels of every series returned
        for lab in re.findall(r'\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}', legend):
            need(all(lab in s["metric"] for s in res), "%s: every series has the legend's label %s" % (where, lab))
    print("# %d expressions asked, %d returned nothing, %d cannot show data on this host" % (n, len(empty), len(excused)))
    for e in empty:
        print("# EMPTY: " + e)
    for e in excused:
        print("# HOST: " + e)
    return not failures


if __name__ == "__main__":
    if sys.argv[1] == "schema":
        schema(sys.argv[2])
    elif sys.argv[1] == "query":
        query(*sys.argv[2:7])
    else:
        sys.exit("usage: dashboard_check.py schema DASHBOARD | query PROM DASHBOARD EXPORTER_C EXPOSITION WINDOW")
    sys.exit(1 if failures else 0)
