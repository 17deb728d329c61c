"""Reasons found by profiling for targets the run missed, keyed by the `finding`
name a part gives its target row. The report prints the reason for each missed
target; a missed target without an entry here is reported as "not profiled yet".
Client-side profiles: pyinstrument 5 (`pyinstrument /tmp/prof_deduct.py ledger 1`,
one process, 6 s, private Redis); server-side: INFO commandstats taken by the
ceiling and latency parts in the same run.
"""
from __future__ import annotations

FINDINGS: dict[str, str] = {
    "deduct_overhead": (
        "Profiled on the core before commit 6d0cf85 (lighter deduct path: partition cache, dict status lookup, inline policy check), which addressed the items named here; not re-profiled after it, so read this as the earlier reason: pyinstrument, one process: of 5.90 s inside `Ledger.deduct`, 5.18 s is redis-py's `evalsha` (the very call "
        "the bare loop makes) and ~0.72 s (~12%) is the Ledger layer itself: `_common` (4× `check_id`), the partition "
        "computed twice per call (`_common` and again in `_hold_keys`, i.e. two crc32s), `_with_retry` entered twice "
        "(once for `_check_policy`, once for the script, each taking a monotonic deadline), `read_cache.invalidate` "
        "taking a lock on every write even when the cache is off, and `Status(...)`/`Result` construction in `_decode`. "
        "On 2 cores every client-side microsecond competes with Redis for the same CPU, so with 2+ processes the ratio "
        "falls below the single-process one. Fix in core (lead): see the report's list of core changes."),
    "deduct_many_overhead": (
        "deduct_many sends its deductions as deduct_batch calls (one FCALL per partition and up to 50 items), so "
        "its client CPU per deduction (~5-8 µs: the request checks, keys, one packed command, decoding) is below "
        "the bare pipeline's of single FCALLs (~9-12 µs); a ratio under 0.8x here would be the machine's load "
        "landing on one side, not the code (see the interleaved client-CPU rows of issue 17)."),
    "hot_ratio": (
        "One account lives in one slot. On the 3-master Cluster all its deductions run on one of the three "
        "redis-servers, while the spread load runs on all three in parallel, so a single-call hot account can "
        "fall below the spread figure; with batching it is above it (deduct_many rows: one account 1.25x-1.62x "
        "of spread, the account's hash stays in the CPU's cache). On standalone one server does both loads, and "
        "a single-call row below 0.9x there is the machine's noise between two 5-second loads run one after the "
        "other (earlier runs: 1.04x). Splitting an account over slots was tried and removed (see 'Hot accounts: "
        "batching, not splitting')."),
    "hot_28k": (
        "Standalone: one account already reaches the spread figure (ratio ≥ 0.9), so the limit is the whole path, not "
        "the hot key: the pipelined ceiling of the same script with a C client was under 40,000/s in this run, the "
        "Python clients of `deduct_many` share the same 2 cores with Redis, and the run shared the machine with other "
        "engineers' tests. Cluster: one hot account is served by one primary (see hot_ratio), and each `deduct_many` batch also pays "
        "redis-py's RedisCluster routing per request (slot lookup per key) before the per-node pipeline goes out; on 2 "
        "cores shared by three redis-servers and the clients, that primary gets well under one core."),
    "memory_record": (
        "Re-measured after commit 6d0cf85 (APPLIED stored as 's'='A'): unchanged, MEMORY USAGE still 168 bytes and the INFO delta still ~208 bytes per record in the 05:24 UTC run, so the expected 16-byte saving did not happen: 'A' instead of 'APPLIED' shortens the listpack by 6 bytes, which (most likely) leaves its allocation in the same jemalloc size class. Earlier analysis: Measured over 100,000 records: INFO delta ~208 bytes per record = MEMORY USAGE 168 bytes (the key "
        "`cs:{p0.0}:t:` + a 32-character txn id, and a 4-field listpack hash: f='deduct|<account>|<amount>', s, b, j) "
        "plus the expires-dict entry of its TTL (~40 bytes). The miss is ~8 bytes. Fix in core/terminal: shorter txn "
        "ids (a 22-character base64url UUID instead of 32 hex characters saves 10 bytes per record), or store the "
        "record as one string value `status|balance|journal_id|fingerprint` instead of a hash (no field names or "
        "listpack header)."),
    "reconcile_30k": (
        "Profiled (cProfile of one consumer draining the bench's 61,000-entry backlog in-process, and earlier "
        "pyinstrument and /proc figures of the PostgreSQL backend). Before issue 17's work 60% of the drain was "
        "psycopg dumping unnest() array parameters in Python, ~20% one frozen dataclass per entry, ~12% a JSON "
        "encoder rebuilt per row: 3,400 entries/s. Done (commits dbb1ada, 4d30ef6): binary COPY straight into "
        "ledger_entries on the fast path (a unique violation = a redelivery: the batch is redone checking "
        "first), staging tables + one INSERT ... SELECT ... ON CONFLICT per table, entries as named tuples built "
        "by core's own from_fields, json's C encoder made once, one pass for all totals, batches of 10,000, two "
        "unread indexes dropped (migration 0008). What is left is the consumer's Python, ~25 µs of CPU per entry "
        "on a quiet minute (XREADGROUP reply and redis-py's dict per entry ~4, parsing ~7, building, chaining "
        "and streaming the row ~8, totals ~4), beside PostgreSQL's work at about raw COPY's cost per row. Across "
        "the session's two full runs (commits 5af1f78 and this report) the first x1 run of the part gave "
        "29,700 and 25,800/s and the best x1 run 32,700 and 28,500/s, two daemons 48,800 and 36,000/s: the "
        "target sits inside the machine's run-to-run spread. "
        "Tried and dropped: a read-ahead "
        "thread parsing the next batch while the database wrote the current one (no gain on 2 loaded cores, "
        "10-20% more CPU from GIL hand-offs). Measured with `python -m bench.drain_instructions` "
        "(callgrind on the parse, row, chain and totals Python of one 21,000-entry batch without the database: "
        "deterministic where timings on this machine are not): 96.4k CPython instructions per entry; "
        "BookEntry.parse building one tuple instead of two, 88.0k (-9%, kept); a fast path in from_fields for "
        "entries without optional fields and a tuple instead of a list for the canonical form: no gain (within "
        "0.5%), dropped; the split accounts' leftovers removed (issue 28: 4 entry fields and 3 row columns fewer; "
        "the database side also loses one of its two balance upserts per batch): 82.2k (-6.6%). A steady 30,000/s "
        "with one "
        "daemon needs the per-entry Python well under 25 µs: a C extension or a leaner journal encoding."),
    "reconcile_copy_ratio": (
        "See reconcile_30k: PostgreSQL's work per entry is about raw COPY's; the consumer's Python (read, parse, "
        "chain, totals) is what keeps one daemon near 0.35x of raw COPY (two daemons: ~0.5x)."),
    "reconcile_lag": (
        "The paced load itself was not sustained: the 2 load processes reached only 4,430 of 10,000 deductions/s "
        "(the row says NOT sustained) on the 2 cores shared with Redis, PostgreSQL, the daemon and other engineers' "
        "test runs, so every process was CPU-starved, the daemon included: lag p50 0.54 s, p99 1.67 s (the lag is "
        "about two batch cycles: the oldest entry of the batch in flight). The drain itself is 3x faster than that "
        "arrival rate (x1 row), and caught up 0.17 s after the load stopped; nothing lost or doubled. Fixed in the "
        "bench: sampling began while the daemon was still starting, which put 2 s of start-up into the p99 (5.6 s "
        "in the first run). Not reached on this machine: needs the load on other cores (terminals are other "
        "machines) or a second daemon."),
    "latency_p99": (
        "Not Redis: INFO commandstats during the paced run shows tens of microseconds of Redis CPU per FCALL, and the "
        "median service time is a fraction of a millisecond. The p99 tail (and the gap between service time and "
        "time-from-schedule) is CPU run-queue waiting: four paced client processes and redis-server share 2 cores, "
        "and a descheduled client delays every request scheduled behind it. On a shared machine this reached tens "
        "of ms; on a quiet one (05:46 UTC run) p99 was 2.03 ms from schedule with a 0.76 ms service-time p99, just "
        "over the 2 ms target. Fix is deployment (Redis on its own core, clients on other machines as the "
        "terminals are), not code."),
    "server_cost": (
        "callgrind of redis-server 7.0.15, per call, in the same run as the minimal script. The product's fresh "
        "deduct, broken down by truncating its function at each step (library copies with an early return): FCALL "
        "with its 12 keys and arguments and a 4-element reply ~38k instructions (the minimal script takes 7); the "
        "KEYS/ARGV checks ~22k (one pattern over the six arguments ~9k, five key comparisons ~5k, two tonumber "
        "~3k); the replay lookup (HMGET of 4 fields) ~10k; the account HMGET ~11k; EXISTS of the hold expiries ~4k; "
        "XADD of 8 field pairs ~23k; the balance HSET ~5k; the decision's HSET, EXPIRE and reply ~20k. Lua's "
        "garbage collector is not the cost (stopping it changes <1%). Done, each commit saying what it bought: one "
        "Function library (-33k: the includes' closures were rebuilt on every EVALSHA), 8 commands instead of 11 "
        "(XADD NOMKSTREAM instead of EXISTS of the journal; balance and last journal id in one HSET), one pattern "
        "for the arguments, EXISTS before reading holds, and no time field in the journal (an entry's time is its "
        "stream id's ms, so deduct, credit and refund call no TIME: -12k each). deduct and credit are within 1.5x "
        "in instructions; hold, capture and refund are not, by what they are: a hold reads the active holds "
        "(EXISTS, range, HMGET), writes the holds hash, the expiry set, the account's last journal id and a "
        "7-field record; a capture reads and updates the hold's record and removes the hold from both structures; "
        "a refund reads and increments the original's record: 2-5 Redis commands more than a deduct, each ~4-6k "
        "through the Lua bridge. The µs ratios move with the machine's load (the minimal script's few commands "
        "gain most from a quiet moment); the instruction counts are within 1-2% run to run. Tried and not kept: "
        "reading the record with EXISTS first (fresh -4.7k, replay +3.4k: the replay target would be missed "
        "instead). Not done: one string instead of the 4-element reply (~5k; changes every script's reply and "
        "every reader), caching validated ids in the library's state. Where many deductions are sent at once, "
        "`deduct_many`'s `deduct_batch` calls cost ~1.34x the minimal script per deduction (the row above)."),
    "client_cpu": (
        "time.process_time of the client, medians of interleaved rounds. Profiled (cProfile over 20,000 calls, this "
        "session): of ~45-50 µs per Ledger.deduct, redis-py's execute_command (packing, socket send/recv, hiredis "
        "parsing, connection pool) is ~90%, the very call the bare loop makes; the Ledger's own Python (the id "
        "pattern, keys from the partition's prefix, the retry wrapper and deadline, the reply check and Result) is "
        "~4-5 µs, i.e. ~1.10x by itself. Rounds minutes apart gave 0.99x-1.13x in one process, and the session's "
        "two full runs 1.08x and 1.22x, for the same code: the single call is right at the target, and the "
        "machine's noise is larger than what is left to take out. Done: one "
        "regex for the four ids, keys from a prefix made once, Result through its slots' setters, isinstance "
        "instead of a failing hasattr per call, the read cache skipped when off. deduct_many is well under its "
        "target (deduct_batch: one command per 50 items)."),
    "record_bytes": (
        "Redis 7.0 has no per-field TTL (HEXPIRE came in 7.4), so a record is one key with a TTL: its dict entry "
        "32 B, the key (prefix + a 32-character txn id) 48 B, the value (robj 16 B + listpack 64 B, or an embstr "
        "of 64 B: the same), the expires-dict entry 32 B and both dicts' slots ~20 B: ~200 B whichever encoding; "
        "the listpack's content (fingerprint, status 'A', balance, journal id) is 59 B of it. ≤160 B needs many "
        "records per key without a per-record TTL (hashes by generation, dropped by age), which changes every "
        "reader of txn records (refund's original, hold state, history, the reconcile checks) and the retention "
        "semantics: not done in issue 17."),
    "i30_server_cost": (
        "callgrind of redis-server per call, interleaved with the minimal full-contract script "
        "(bench/contenders/minimal_deduct.lua: 3 keys, 7 arguments; HMGET, HSET, XADD, HSET, EXPIRE). The "
        "product's fresh deduct carries 7 keys and 7 arguments (the holds, their expiries, the shop's spending "
        "order and the member's cards travel with every charge because the charge checks them) and checks every "
        "key and argument before it touches anything: issue 17's truncation profile put FCALL with its 14 keys "
        "and arguments at ~38k instructions and the checks at ~22k, against ~7k and none for the minimal "
        "script. Issue 30's journal encoding and string reply took ~8k; the second pass (2026-12-08, "
        "benchmarks-history.md) took what was left without changing a contract: no tonumber below the limits' "
        "digit counts, a zero amount through the one pattern, the milliseconds cut from TIME's digits, extras "
        "appended already encoded, credit's reply built once and its debt fields written with the balance and "
        "the decision, void without an EXISTS of the journal. Per hold, ~87k instructions are its 10-12 "
        "commands through the Lua bridge, ~19k its 6 keys and 8 arguments, ~20k reading the request and "
        "sending the reply, ~72k Lua work; the 7-field record's HSET and EXPIRE alone are ~28k, and reading "
        "the hold's record costs a capture ~12k, the original's a refund about as much. Every command left is "
        "one the contract or the key layout needs. What would move the ratios: the record written without a "
        "per-call EXPIRE (the item-4 layout in docs/ledger.md: HMGET + HGET + HSET), and fewer keys per "
        "charge (a contract change)."),
    "i30_drain": (
        "This host ran at about half the speed of the 2026-12-01 run's (the same scripts' instruction counts "
        "took 1.9x the µs; a Python loop of 10 million additions 0.97 s), and one daemon's drain is the "
        "daemon's Python plus PostgreSQL's work on the same 2 cores: raw binary COPY of the same rows alone "
        "gave 54,712 rows/s here, so 40,000/s would be 0.73x of it. The ratio the host does not move: one "
        "daemon drained 0.64x of raw COPY (best run 34,874/s; 0.28-0.44x before issue 30's second pass), "
        "above the 0.45x target. The daemon's own Python is ~80k CPython instructions per entry (`python -m "
        "bench.drain_instructions`; by cProfile of one batch: parsing ~25%, the hash chain ~23%, the totals "
        "~12%, building the row ~10%), plus redis-py's read and the XACK. Two daemons gave 1.10x one: both "
        "compete with PostgreSQL for the same 2 cores (each daemon alone keeps about a core busy with "
        "PostgreSQL's backend beside it), so the second adds what the cores have left, not what the design "
        "allows; on a server with cores to spare each daemon takes its own partitions. Done in issue 30: one "
        "field per entry (redis-py decodes 3 strings per entry instead of 17-25), the common kinds parsed "
        "straight into the book's tuple, XREADGROUP read raw (read + parse 8.6 -> 6.2 µs per entry of client "
        "CPU), stream positions padded without int() (1.2 -> 0.8 µs). Not done: the hash chain and the totals "
        "in C."),
    "i30_record_bytes": (
        "Measured 2026-12-08 (INFO used_memory over 200,000 records): a hash per txn with its TTL 228 B, a "
        "string per txn with its TTL 197 B, a field of a shared hash 138 B (`python -m bench.record_layout` runs the "
        "minimal deduct with the designed layout beside today's: 86 B per record while a shard holds at most "
        "512, a listpack; 139 B beyond, hash tables; 215 B today; the same instructions per call, 101.4k vs "
        "101.1k fresh, 48.4k vs 46.7k replay). Any layout with one key per record "
        "pays the key's dict entry, its name, the value object and an expiry entry (~190 B); ≤ 160 B needs many "
        "records per key. The layout (static shard hashes rotated by age inside the calls, no clock on the "
        "caller, no EXPIRE per call) is designed in docs/ledger.md ('Records of at most 160 bytes'); it changes "
        "every script's KEYS, every reader of records and needs an upgrade step moving the live records, so it "
        "is its own piece of work, not done in issue 30."),
    "i30_deduct_many": (
        "50,000/s is above what this host's Redis itself gave for the deduct script in this run: "
        "redis-benchmark -P 16 of the product's deduct 23,883-30,807 deductions/s (part 1 and part 17), 38.3 "
        "µs of Redis CPU per call against 20.6 µs in the 2026-12-01 run for the same instruction counts (the "
        "host ran at about half that run's speed). `deduct_many` with 2 processes reached 26,072/s, 1.10x the "
        "bare redis-py pipeline of the same calls (23,660/s) beside it: the client is no longer the limit. "
        "Issue 30 cut its client CPU from 22 to 10 µs per deduction (redis-py packed each of an item's 14 "
        "arguments with a Python call; core.resp_packing packs plain arguments in one hiredis call): 18.6 µs "
        "vs the bare pipeline's 19.7 µs in part 17's client-CPU row. Redis's cost per batched item is 130,233 "
        "instructions, 1.28x the minimal script's single call."),
    "gateway_two_processes": (
        "Issue 24, measured 2026-12-07 with the CPU of each component sampled from /proc (the row's note): the whole "
        "machine was busy (2.0 of 2.0 cores; other sessions' jobs took 0.75-1.19 of them), and a charge through a "
        "gateway costs about 0.56-0.65 ms of gateway CPU plus 0.59-0.85 ms of client CPU (httpx) plus 0.07 ms of "
        "Redis: about 1.3 ms of CPU per charge, so the cores left to the run (about 1) serve at most about "
        "600-1,000 charges/s however many gateway processes share them. Two gateways gave 0.90-1.51x one: a second "
        "process can only take CPU away from the clients. On a server PC with 4 free cores and the tills on their "
        "own PCs, each gateway process has a core of its own (0.6 ms per charge: about 1,700 charges/s each), so "
        "two processes serve about 2x one; this machine cannot show it."),
    "gateway_deduct_many": (
        "Issue 24: CPU-bound on 2 saturated cores. Through the gateway a batch of 100 costs the gateway process "
        "2.9-3.3 ms of CPU (core's deduct_many itself about 1.2 ms, mostly redis-py packing 1,400 command "
        "arguments; HTTP, JSON both ways and the item checks the rest) plus 1.4-1.6 ms in the client, against "
        "1.2-1.4 ms in a client calling Ledger.deduct_many directly (one client, 200 batches, private Redis, "
        "process CPU time). With the cores shared, the ratio is about the CPU ratio: 0.55 and 0.61 in two runs "
        "(0.89 and 0.95 in two others, where other jobs took 1.4-1.6 of the 2 cores and starved both paths "
        "alike). The gateway's own share was cut from about 0.8 to 0.3 ms "
        "per batch (a Result encoded without the dataclass walk, statuses and field names looked up once, a "
        "plain-item fast path in schema.check_batch). Also: one gateway process runs core's per-item work for every "
        "till, where direct tills each run their own, so on a server PC with free cores one process caps at about "
        "30,000-35,000 deductions/s (3 ms per batch of 100): batches from many tills need two gateway processes, "
        "as single charges do."),
    "gateway_throughput": (
        "Issue 24: one gateway process spends about 0.6 ms of CPU per charge (h11 parsing, Starlette, the "
        "thread-pool hop, core's deduct) and each httpx client about 0.6-0.7 ms: 5,000 charges/s needs 3 cores for "
        "the gateways alone at that cost. Measured 595-870/s here with the machine saturated by other jobs. Next: "
        "uvicorn's httptools parser (not installed in this environment), a leaner till client, and several "
        "gateway processes per server (the two-process row)."),
}

# Printed under part 4: why the bench has no split-account rows any more.
# issue 17 set the same target; its reason is issue 30's, measured with the same run
FINDINGS["deduct_many_50k"] = FINDINGS["i30_deduct_many"]

HOT_ACCOUNT_NOTE = (
    "Split accounts (a hot account spread over shards in other slots) were removed (issue 12). On one Redis, "
    "standalone or Sentinel (what a shop runs), every script runs one after the other on one thread, so spreading "
    "an account over more keys cannot raise its throughput; measured before the removal, 4 shards gave 0.25x and "
    "8 shards 0.19x of the unsplit account's deductions/s on standalone (0.18x and 0.15x on the 3-master Cluster), "
    "and a split account's contract could not equal the plain account's (issue 12, defects 2, 3, 6, 8 and 9). A hot "
    "account is served by `deduct_many` (one round trip per batch, the batching rows above) and by lean scripts "
    "(issue 17).")
