#!/usr/bin/env python3
"""pprof_check.py FILE SAMPLES [KIND [PROGRAM]] -- an independent reader of a gzipped
profile.proto, Python standard library only (gzip, and the protobuf wire
format parsed by hand from the field numbers of proto/profile.proto).

Checks what any pprof reader relies on: string_table[0] == "", ids nonzero
and unique, every Sample.location_id, Location.mapping_id and
Line.function_id resolving, every string index in range, as many values in
each sample as sample_types; every Location.address inside its Mapping's
[memory_start, memory_limit) when the mapping has a range (pprof places
addresses in the file with it); that value[0] (samples/count) sums to
SAMPLES; with KIND ("cpu" or "wall"), that sample_type[1] is
KIND/nanoseconds; with PROGRAM, that the first mapping (pprof's "File:") is
that file, with an address range.
Prints one summary line; exit 0 when all hold, 1 with the reasons.
Used by tests/unit/test_profile_export.c.
"""
import gzip
import sys
import zlib


def varint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf):
            raise ValueError("varint runs past the end")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def fields(buf):
    """(field number, wire type, value) of one message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ValueError("field number 0")
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(buf, i)
            if i + n > len(buf):
                raise ValueError("length-delimited field runs past the end")
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def ints(wt, v):
    """A repeated integer field's values, packed (wire type 2) or not."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def message(buf, spec):
    """Decode buf as a message: spec maps field number -> (name, kind, repeated)."""
    out = {name: ([] if rep else (b"" if kind in ("str", "msg") else 0))
           for name, kind, rep in spec.values()}
    for num, wt, v in fields(buf):
        if num not in spec:
            continue
        name, kind, rep = spec[num]
        if kind in ("str", "msg"):
            val = [bytes(v)]
        else:
            val = [signed(x) if kind == "int64" else x for x in ints(wt, v)]
        if rep:
            out[name].extend(val)
        else:
            out[name] = val[-1]
    return out


VALUE_TYPE = {1: ("type", "int64", False), 2: ("unit", "int64", False)}
LABEL = {1: ("key", "int64", False), 2: ("str", "int64", False), 3: ("num", "int64", False),
         4: ("num_unit", "int64", False)}
SAMPLE = {1: ("location_id", "uint64", True), 2: ("value", "int64", True),
          3: ("label", "msg", True)}
MAPPING = {1: ("id", "uint64", False), 2: ("memory_start", "uint64", False),
           3: ("memory_limit", "uint64", False), 4: ("file_offset", "uint64", False),
           5: ("filename", "int64", False), 6: ("build_id", "int64", False),
           7: ("has_functions", "uint64", False)}
LINE = {1: ("function_id", "uint64", False), 2: ("line", "int64", False)}
LOCATION = {1: ("id", "uint64", False), 2: ("mapping_id", "uint64", False),
            3: ("address", "uint64", False), 4: ("line", "msg", True)}
FUNCTION = {1: ("id", "uint64", False), 2: ("name", "int64", False),
            3: ("system_name", "int64", False), 4: ("filename", "int64", False)}
PROFILE = {1: ("sample_type", "msg", True), 2: ("sample", "msg", True),
           3: ("mapping", "msg", True), 4: ("location", "msg", True),
           5: ("function", "msg", True), 6: ("string_table", "str", True),
           9: ("time_nanos", "int64", False), 10: ("duration_nanos", "int64", False),
           11: ("period_type", "msg", False), 12: ("period", "int64", False),
           13: ("comment", "int64", True), 14: ("default_sample_type", "int64", False)}


def check(path, want_samples, kind, program=None):
    errors = []
    raw = open(path, "rb").read()
    if raw[:2] != b"\x1f\x8b":
        return ["not gzip (magic %r)" % raw[:2]]
    p = message(gzip.decompress(raw), PROFILE)
    strings = [s.decode("utf-8") for s in p["string_table"]]
    if not strings or strings[0] != "":
        errors.append("string_table[0] is not \"\"")

    def s(i, what):
        if not 0 <= i < len(strings):
            errors.append("%s: string index %d out of range" % (what, i))
            return "?"
        return strings[i]

    types = [message(t, VALUE_TYPE) for t in p["sample_type"]]
    names = [(s(t["type"], "sample_type"), s(t["unit"], "sample_type")) for t in types]
    if not names or names[0] != ("samples", "count"):
        errors.append("sample_type[0] is %r, not samples/count" % (names[:1],))
    if kind and (len(names) < 2 or names[1] != (kind, "nanoseconds")):
        errors.append("sample_type[1] is %r, not %s/nanoseconds" % (names[1:2], kind))

    def ids(msgs, what):
        out = {}
        for m in msgs:
            if m["id"] == 0 or m["id"] in out:
                errors.append("%s id %d zero or repeated" % (what, m["id"]))
            out[m["id"]] = m
        return out

    mappings = ids([message(m, MAPPING) for m in p["mapping"]], "mapping")
    functions = ids([message(f, FUNCTION) for f in p["function"]], "function")
    locations = ids([message(l, LOCATION) for l in p["location"]], "location")
    for m in mappings.values():
        s(m["filename"], "mapping filename")
        if m["memory_limit"] and m["memory_start"] >= m["memory_limit"]:
            errors.append("mapping %d: empty range 0x%x-0x%x" % (m["id"], m["memory_start"],
                                                              m["memory_limit"]))
    if program:
        first = message(p["mapping"][0], MAPPING) if p["mapping"] else None
        if not first or s(first["filename"], "mapping filename") != program:
            errors.append("the first mapping is %r, not the program %r" %
                          (first and s(first["filename"], "mapping filename"), program))
        elif not first["memory_start"] < first["memory_limit"]:
            errors.append("the program's mapping has no address range")
    for f in functions.values():
        s(f["name"], "function name")
        s(f["system_name"], "function system_name")
        s(f["filename"], "function filename")
    for l in locations.values():
        if l["mapping_id"] and l["mapping_id"] not in mappings:
            errors.append("location %d: mapping %d missing" % (l["id"], l["mapping_id"]))
        m = mappings.get(l["mapping_id"])
        if m and m["memory_limit"] and not m["memory_start"] <= l["address"] < m["memory_limit"]:
            errors.append("location %d: address 0x%x outside its mapping %s 0x%x-0x%x" %
                          (l["id"], l["address"], s(m["filename"], "mapping filename"),
                           m["memory_start"], m["memory_limit"]))
        for line in l["line"]:
            fid = message(line, LINE)["function_id"]
            if fid not in functions:
                errors.append("location %d: function %d missing" % (l["id"], fid))
    total = 0
    for n, raw_sample in enumerate(p["sample"]):
        sm = message(raw_sample, SAMPLE)
        if len(sm["value"]) != len(types):
            errors.append("sample %d: %d values for %d types" % (n, len(sm["value"]), len(types)))
            continue
        total += sm["value"][0]
        for lid in sm["location_id"]:
            if lid not in locations:
                errors.append("sample %d: location %d missing" % (n, lid))
        for lb in sm["label"]:
            lab = message(lb, LABEL)
            s(lab["key"], "label key")
            s(lab["str"], "label str")
    for c in p["comment"]:
        s(c, "comment")
    if total != want_samples:
        errors.append("samples sum to %d, not %d" % (total, want_samples))
    print("pprof_check: %d samples in %d sample rows, %d locations, %d functions, %d mappings, "
          "%d strings, %d comments" % (total, len(p["sample"]), len(locations), len(functions),
                                       len(mappings), len(strings), len(p["comment"])))
    return errors


def main():
    if len(sys.argv) < 3:
        print("usage: pprof_check.py FILE SAMPLES [cpu|wall [PROGRAM]]", file=sys.stderr)
        return 2
    try:
        errors = check(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None,
                       sys.argv[4] if len(sys.argv) > 4 else None)
    except (ValueError, OSError, EOFError, UnicodeDecodeError, zlib.error) as e:
        errors = ["cannot decode: %s" % e]
    for e in errors[:20]:
        print("pprof_check: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
