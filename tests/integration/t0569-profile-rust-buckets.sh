#!/usr/bin/env bash
# Report 002's table from one command, on the report's own language (issue 25):
# a Rust service's sync thread (std only, rustc -O -g) decodes JSON, hashes
# what it decoded and sends it over loopback TCP to a reader thread.  The
# JSON tokenizer and the hashing are inlined into functions with neutral
# names (stage_one, stage_two): only the inlined frames from DWARF and the
# built-in rules for demangled Rust names put them in "JSON/serialization"
# and "hashing"; sends and receives are "network send/recv".  Each bucket
# within 3 points of the program's own clocks (each stage's CPU by the
# sync thread's clock, the reader's, the process's, between two SIGUSR1
# marks).  Before inlined frames the JSON and hashing were "other".
# Prerequisite: perf events (root, or perf_event_paranoid <= 1), rustc.
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
command -v rustc >/dev/null || skip "no rustc (scripts/deps.sh --test installs Debian's rustc)"

cat >"$WORK/sync.rs" <<'EOF2'
// A report-002-shaped service, std only: its sync thread decodes JSON, hashes
// what it decoded and sends it over loopback TCP to a reader thread, in rounds.
// The JSON tokenizer and the hashing are inlined into neutral names (stage_one,
// stage_two): only their inlined frames say what they are.  The truth is each
// stage's CPU by the thread's own clock, the reader's CPU, and the process's;
// SIGUSR1 writes a truth line at the next stage boundary.
use std::hash::Hasher;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[repr(C)]
struct Timespec { sec: i64, nsec: i64 }
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    fn signal(sig: i32, handler: extern "C" fn(i32)) -> usize;
}
const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
const SIGUSR1: i32 = 10;

fn cpu_ns(clock: i32) -> u64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    unsafe { clock_gettime(clock, &mut ts) };
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

static MARK: AtomicBool = AtomicBool::new(false);
static READER_NS: AtomicU64 = AtomicU64::new(0);
extern "C" fn on_usr1(_: i32) { MARK.store(true, Ordering::SeqCst); }

mod json {
    // a tokenizer over a JSON document: strings, numbers, punctuation
    #[inline(always)]
    pub fn tokenize(doc: &[u8]) -> (u64, u64) {
        let (mut strings, mut numbers, mut i) = (0u64, 0u64, 0usize);
        while i < doc.len() {
            let c = doc[i];
            if c == b'"' {
                i += 1;
                while i < doc.len() && doc[i] != b'"' {
                    if doc[i] == b'\\' { i += 1; }
                    strings = strings.wrapping_add(doc[i] as u64);
                    i += 1;
                }
            } else if c.is_ascii_digit() || c == b'-' {
                let mut v = 0u64;
                while i < doc.len() && doc[i].is_ascii_digit() {
                    v = v.wrapping_mul(10).wrapping_add((doc[i] - b'0') as u64);
                    i += 1;
                }
                numbers = numbers.wrapping_add(v);
                continue;
            }
            i += 1;
        }
        (strings, numbers)
    }
}

#[inline(never)]
fn stage_one(doc: &[u8], until: u64) -> u64 {
    let mut acc = 0u64;
    loop {
        for _ in 0..16 {
            let (s, n) = json::tokenize(doc);
            acc = acc.wrapping_add(s ^ n);
        }
        if cpu_ns(CLOCK_THREAD_CPUTIME_ID) >= until { return acc; }
    }
}

#[inline(never)]
fn stage_two(doc: &[u8], until: u64) -> u64 {
    let mut acc = 0u64;
    loop {
        for _ in 0..16 {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            h.write(doc);
            acc ^= h.finish();
        }
        if cpu_ns(CLOCK_THREAD_CPUTIME_ID) >= until { return acc; }
    }
}

#[inline(never)]
fn stage_three(out: &mut TcpStream, doc: &[u8], until: u64) {
    loop {
        for _ in 0..16 {
            out.write_all(doc).unwrap();
        }
        if cpu_ns(CLOCK_THREAD_CPUTIME_ID) >= until { return; }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
    let truth_path = args.get(2).cloned().unwrap_or_else(|| "/dev/null".into());
    unsafe { signal(SIGUSR1, on_usr1) };
    let mut doc = Vec::new();
    for i in 0..400 {
        doc.extend_from_slice(format!("{{\"id\":{},\"name\":\"item-{}\",\"tags\":[\"a\",\"b\\\"c\"],\"size\":{}}},", i, i * 7, i * 131).as_bytes());
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::Builder::new().name("reader".into()).spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; 65536];
        for n in 0u64.. {
            match s.read(&mut buf) { Ok(0) | Err(_) => return, Ok(_) => {} }
            if n % 16 == 0 {
                READER_NS.store(cpu_ns(CLOCK_THREAD_CPUTIME_ID), Ordering::Relaxed);
            }
        }
    }).unwrap();
    let mut out = TcpStream::connect(addr).unwrap();
    let mut truth = std::fs::OpenOptions::new().create(true).append(true).open(&truth_path).unwrap();
    println!("pid {}", std::process::id());
    let end = Instant::now() + Duration::from_secs(secs);
    let (mut json_ns, mut hash_ns, mut send_ns, mut sink, mut marks) = (0u64, 0u64, 0u64, 0u64, 0u32);
    while Instant::now() < end {
        let t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
        sink ^= stage_one(&doc, t0 + 12_000_000);
        let t1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
        sink ^= stage_two(&doc, t1 + 6_000_000);
        let t2 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
        stage_three(&mut out, &doc, t2 + 4_000_000);
        let t3 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
        json_ns += t1 - t0; hash_ns += t2 - t1; send_ns += t3 - t2;
        if MARK.swap(false, Ordering::SeqCst) {
            marks += 1;
            writeln!(truth, "{{\"mark\":{},\"json_s\":{},\"hash_s\":{},\"send_s\":{},\"reader_s\":{},\"process_s\":{}}}",
                     marks, json_ns as f64 / 1e9, hash_ns as f64 / 1e9, send_ns as f64 / 1e9,
                     READER_NS.load(Ordering::Relaxed) as f64 / 1e9,
                     cpu_ns(CLOCK_PROCESS_CPUTIME_ID) as f64 / 1e9).unwrap();
        }
    }
    println!("{}", sink);
}
EOF2
rustc -O -g -o "$WORK/sync" "$WORK/sync.rs" 2>"$WORK/rustc.err" || fail "rustc: $(cat "$WORK/rustc.err")"
"$WORK/sync" 120 "$WORK/truth" >"$WORK/sync.out" 2>&1 &
P=$!
PIDS+=("$P")
sleep 1
kill -USR1 "$P"
vitals profile --for 4s --hz 499 --json "$P" >"$WORK/p.json" 2>"$WORK/p.err" || fail "profile: $(cat "$WORK/p.err")"
kill -USR1 "$P"
sleep 0.5
check "JSON/serialization, hashing and network send/recv within 3 points of the program's own clocks" \
	python3 - "$WORK/truth" "$WORK/p.json" <<'PY'
import json, sys
t = {}
for l in open(sys.argv[1]):
    m = json.loads(l)
    t.setdefault(m["mark"], m)
a, b = t[1], t[2]
cpu = b["process_s"] - a["process_s"]
truth = {
    "JSON/serialization": (b["json_s"] - a["json_s"]) / cpu,
    "hashing": (b["hash_s"] - a["hash_s"]) / cpu,
    "network send/recv": (b["send_s"] - a["send_s"] + b["reader_s"] - a["reader_s"]) / cpu,
}
got = {x["name"]: x["share"] for x in json.load(open(sys.argv[2]))["buckets"]}
worst = 0
for name, share in truth.items():
    diff = 100 * (got.get(name, 0) - share)
    worst = max(worst, abs(diff))
    print(f"#   {name:20} truth {100 * share:5.1f}  vitals {100 * got.get(name, 0):5.1f}  ({diff:+.1f})")
print("#   the rest:", {k: round(100 * v, 1) for k, v in got.items() if k not in truth})
sys.exit(worst > 3)
PY
echo "ok - t0569"
