#!/usr/bin/env python3
"""Turn bench runs into results/<scenario>.{json,md}, results/s002.png and
results/README.md.  Called by scripts/bench.sh; never edit its output."""
import argparse
import glob
import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RES = os.path.join(TOP, "results")
SPREAD_LIMIT = 0.5  # % between the icount boots of one kernel
# A row left out of that check as following timing shows its spread over at
# least this many boots of each kernel (bench.sh boots its scenario so).
TIMING_BOOTS = 5
NOTE = ("icount: one vCPU under TCG with `-icount shift=0,sleep=off`, so a "
        "guest nanosecond is one guest instruction and each figure is guest "
        "instructions per {per}, all parties on the one CPU counted. It "
        "does not model caches, branch prediction, cross-CPU wakeups, IPIs "
        "or lock contention; it is not pps.")


def load(path):
    """A run's cases, per case its counted functions' calls per packet
    (from the case's own run with the count on, "NAME (counted)"), and
    what the run left out (run.sh's "skipped", natively)."""
    cases, counted, counts, skips = {}, {}, {}, []
    for line in open(path):
        r = json.loads(line)
        if "skipped" in r:
            skips.append(r["skipped"])
        elif "count" in r:
            pk = counted[r["case"]]
            if not pk:
                sys.exit(f"report: {path}: the counted run of {r['case']!r} got no "
                         "packets (its consumer or generator stalled): nothing written")
            counts[r["case"]] = {fn: hits / pk for fn, hits in r["count"].items()}
        elif r["case"].endswith(" (counted)"):
            counted[r["case"][:-len(" (counted)")]] = r["result"]["packets"]
        else:
            cases[r["case"]] = r
    return cases, counts, skips


def figures(r, counts, mode):
    res = r["result"]
    pk = res["packets"]
    ns = res["ns"]
    f = {"value": ns / pk if mode == "icount" else pk * 1e9 / ns,
         "idle": res.get("idle_ticks", 0) > 0}
    sent = r.get("generator", res).get("packets", pk)
    got = res.get("received", pk)
    f["drops"] = sent - got if "generator" not in r else sent - pk
    # a figure per packet a consumer received, some of them not
    f["lossy"] = "generator" in r and sent > pk
    if "csw" in res:
        f["csw_per_pkt"] = res["csw"] / pk
    if "worker_csw" in res and res.get("mode") == "rx":
        f["worker_csw_per_pkt"] = res["worker_csw"] / pk
    for fn, per_pkt in counts.get(r["case"], {}).items():
        f[fn + "_per_pkt"] = per_pkt
    if res.get("role") == "stream":
        # A stream's figure is per KiB of payload: how many packets carry
        # it depends on TSO and on timing.  Per packet is shown beside.
        kib = res["bytes"] / 1024
        f["value"] = ns / kib if mode == "icount" else kib * 1e9 / ns
        if mode == "icount":
            f["insn_per_pkt"] = ns / pk
    if mode != "icount":
        # the CPU time of all CPUs in the measured window, per packet
        # (common.c's busy_ticks()); and an rr client's round trips
        if "busy_ticks" in res:
            f["cpu_us_per_pkt"] = res["busy_ticks"] * 1e6 / res["hz"] / pk
        for p in ("p50", "p99"):
            if p + "_ns" in res:
                f[p + "_us"] = res[p + "_ns"] / 1e3
    return f


def git(*args, tree="series"):
    return subprocess.run(["git", "-C", os.path.join(TOP, "build", tree, "linux")] +
                          list(args), capture_output=True, text=True).stdout.strip()


def commit(ref):
    """A commit by its subject and tree, which amending its message keeps."""
    return git("log", "-1", "--format=\"%s\" (tree %t)", ref)


def release(kernel):
    p = os.path.join(TOP, "build", kernel, "out/include/config/kernel.release")
    return open(p).read().strip() if os.path.exists(p) else "?"


def summarize(runs, scen, mode, series_kernel, base_kernel="base"):
    """The runs of base_kernel and series_kernel (their run folders' names
    up to "-REP") as the rows' "base" and "series".  A row's figure is the
    mean of the runs under icount, whose runs repeat, and their median in
    the wall-clock modes."""
    kernels = {}
    names = {base_kernel: "base", series_kernel: "series"}
    for d in sorted(glob.glob(os.path.join(runs, scen, "*-*/results.jsonl"))):
        k, rep = os.path.basename(os.path.dirname(d)).rsplit("-", 1)
        if k in names:
            kernels.setdefault(names[k], []).append((d,) + load(d))
    for k in ("base", "series"):
        if k not in kernels:
            sys.exit(f"report: no {k} run of {scen} in {runs}")
    # A case may be missing only from a run that says what it skipped
    # (natively, a kernel without vhost-net or pktgen).
    every = [c for _, cases, _, _ in kernels["base"] + kernels["series"] for c in cases]
    order = list(dict.fromkeys(every))
    for d, cases, _, skips in kernels["base"] + kernels["series"]:
        lost = [c for c in order if c not in cases]
        if lost and not skips:
            sys.exit(f"report: {d} has no case {lost[0]!r} and skipped nothing: an incomplete run")
    order = [c for c in order if all(c in cases for _, cases, _, _ in
                                     kernels["base"] + kernels["series"])]

    def mid(v):
        return sum(v) / len(v) if mode == "icount" else sorted(v)[len(v) // 2]
    out = []
    for c in order:
        row = {"case": c, "params": kernels["base"][0][1][c]["params"]}
        for k, reps in kernels.items():
            figs = [figures(cases[c], counts, mode) for _, cases, counts, _ in reps]
            vals = [f["value"] for f in figs]
            v = mid(vals)
            row[k] = {"value": v, "runs": vals,
                      "spread_pct": 100 * (max(vals) - min(vals)) / v}
            for key in figs[0]:
                if key != "value":
                    row[k][key] = mid([f[key] for f in figs])
            if mode != "icount":
                row[k].update(min=min(vals), median=v, max=max(vals))
        row["change_pct"] = 100 * (row["series"]["value"] / row["base"]["value"] - 1)
        out.append(row)
    return out


def skipped(runs, scen):
    """The cases run.sh left out of a scenario's runs, and why."""
    return sorted({why for d in glob.glob(os.path.join(runs, scen, "*-*/results.jsonl"))
                   for why in load(d)[2]})


def lossy(r):
    """A consumer that could not keep up, on every boot of both kernels: its
    figure per received packet is its share of the vCPU, which the tasks'
    first few hundred switches decide, and does not repeat the way a cost
    does.  A row that drops on some boots only is checked like the rest."""
    return r["base"]["lossy"] == 1 and r["series"]["lossy"] == 1


def timed(r, seed):
    """A case bench/seeds.json names as one whose frames or bursts follow
    the timing of the tasks that share the vCPU (timing_cases): shown with
    its spread over TIMING_BOOTS boots or more and, like a lossy one, left
    out of the check."""
    return r["case"] in seed.get("timing_cases", ())


def boots(doc):
    """How many boots of each kernel the figures are over, in words."""
    n = min(len(r[k]["runs"]) for r in doc["cases"] for k in ("base", "series"))
    return {2: "two", 3: "three", 4: "four", 5: "five"}.get(n, str(n))


def spread(r):
    return max(r["base"]["spread_pct"], r["series"]["spread_pct"])


def fmt(v, mode):
    return f"{v:,.0f}" if mode == "icount" else f"{v / 1e6:.3f} M"


NATIVE_NOTE = ("native: the bench on the running kernel of one machine, booted into "
               "each kernel in turn; the median of 5 runs. cpu_us_per_pkt is the time "
               "all CPUs were busy in a case's measured window (/proc/stat, in USER_HZ "
               "ticks), anything else the machine did included.")
STANDIN_NOTE = ("**Pipeline test, not a figure**: TCG stands in for KVM here, so these "
                "numbers measure the emulator; they show only that the kvm mode's boots, "
                "runs and report work end to end.")


def markdown(doc, seed):
    mode = doc["mode"]
    per = seed.get("per", "packet")
    unit = (f"guest instructions per {per}" if mode == "icount"
            else f"{per if per == 'KiB' else per + 's'} per second (median of 5)")
    b, s = doc["kernels"]["base"], doc["kernels"]["series"]
    nb, ns = doc.get("names", ("base", "series"))
    at = f" at {b['head']}" if b["head"] != "base" else ""
    L = [f"# {doc['scenario']}: {seed['setup']}", "",
         f"Generated by `{doc['command']}` ({doc['mode']} mode); {nb} "
         f"{b['release']}{at}, {ns} {s['release']} at {s['head']}.", ""]
    if doc.get("standin"):
        L += [STANDIN_NOTE, ""]
    if mode == "icount":
        L += [NOTE.format(per=per), ""]
    if mode == "native":
        L += [NATIVE_NOTE, "", "Machine: " + ", ".join(
            f"{k} {v}" for k, v in doc["machine"].items()) + ".", ""]
    if seed.get("seed"):
        L += [f"Seed {seed['seed']}: {seed['thread']}", "",
              f"| seed | {seed['unit']} |", "|---|---|"]
        L += [f"| {a} | {b:,} |" for a, b in seed["rows"]]
    else:
        L += [seed["about"]]
    # wall-clock figures vary from run to run: each row shows how much
    extras = [] if mode == "icount" else ["spread_pct"]
    for r in doc["cases"]:
        extras += [k for k in r["base"] if (k.endswith(("_per_pkt", "_us")) or k == "drops")
                   and k not in extras]
    L += ["", f"| case | {nb} | {ns} | change | " + " | ".join(
        f"{e} {nb}/{ns}" for e in extras) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(extras)]
    for r in doc["cases"]:
        b, s = r["base"], r["series"]
        ex = " | ".join("-" if e not in b else f"{b[e]:.0f} / {s[e]:.0f}" if e == "drops"
                        else f"{b[e]:.1f}% / {s[e]:.1f}%" if e == "spread_pct"
                        else f"{b[e]:.3f} / {s[e]:.3f}" for e in extras)
        mark = " (idle)" if mode == "icount" and (b.get("idle") or s.get("idle")) else ""
        if mode == "icount" and lossy(r):
            mark += f" (lossy, ±{spread(r):.2f}%)"
        elif mode == "icount" and timed(r, seed):
            mark += f" (timing, ±{spread(r):.2f}%)"
        elif mode == "icount" and spread(r) > SPREAD_LIMIT:
            mark += " †"
        L.append(f"| {r['case']}{mark} | {fmt(b['value'], mode)} | {fmt(s['value'], mode)} | "
                 f"{r['change_pct']:+.1f}% | {ex} |")
    L += ["", f"Unit: {unit}. Change: {ns} against {nb} (negative is fewer "
          "instructions)." if mode == "icount" else
          f"Unit: {unit}. spread_pct: (max - min) / median of a kernel's runs; a "
          "change inside it is no result."]
    if doc.get("skipped"):
        L += ["", "Not run on these kernels: " + "; ".join(doc["skipped"]) + "."]
    if mode == "icount" and any(r["base"].get("idle") or r["series"].get("idle")
                                for r in doc["cases"]):
        L += ["", "(idle): the CPU went idle while the receiver ran: after the last "
              "packet when some were dropped (it waits for them until its timeout, "
              "outside the figure, which ends at the last packet), or between packets; "
              "under icount the clock skips idle time, so in the second case the figure "
              "is not instructions alone."]
    if mode == "icount":
        worst = max([spread(r) for r in doc["cases"]
                     if not lossy(r) and not timed(r, seed)], default=0)
        n = boots(doc)
        L += ["", f"Repeatability: largest spread between the {n} boots of a kernel "
              f"{worst:.3f}% (limit {SPREAD_LIMIT}%, lossless rows"
              f"{' not marked (timing)' if any(timed(r, seed) for r in doc['cases']) else ''}).", "",
              "To repeat so, each generator starts once its consumer sleeps, on a "
              "whole second of the guest clock (pktgen just after its thread's 100 ms "
              "poll), and the tick and the tasks' places in the scheduler repeat from "
              "boot to boot; s000's bridge neither learns nor holds local entries, as "
              "its fdb hash is seeded at random on each boot; s000 and s003, where a "
              "generator and a consumer take turns on the vCPU, run five times as many "
              "packets (README, Measuring)."]
        if worst > SPREAD_LIMIT:
            L += ["", f"†: the {n} boots of a kernel differ by more than {SPREAD_LIMIT}% "
                  "(figure: their mean); read these rows as ±(spread)."]
        if any(k.endswith("_per_pkt") and k not in ("csw_per_pkt", "worker_csw_per_pkt")
               for r in doc["cases"] for k in r["base"]):
            L += ["", "Function calls per packet (e.g. sock_def_readable_per_pkt) come from "
                  "a run of their own with a kprobe on the function (a probe costs "
                  "instructions), over a fifth of the packets."]
        if any(timed(r, seed) for r in doc["cases"]):
            L += ["", f"(timing, ±spread): {seed['timing_why']} Such a row is shown with "
                  f"its spread over its {n} boots of each kernel and left out of "
                  "the repeatability check."]
        if any(lossy(r) for r in doc["cases"]):
            L += ["", "(lossy, ±spread): on every boot the tap dropped packets that the "
                  "consumer could not take in time. The figure per received packet is then the "
                  "consumer's share of the vCPU, which the first few hundred task "
                  "switches decide differently from boot to boot: it is shown with "
                  "its spread and left out of the repeatability check."]
    return "\n".join(L) + "\n"


def plot_s002(doc):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, mode, key, xl in ((axes[0], "msg_more", "rx_frames", "rx-frames (MSG_MORE, bursts of 64)"),
                              (axes[1], "xdp_batch", "burst", "burst (XDP batch, sndbuf unlimited)")):
        rows = [r for r in doc["cases"] if r["params"].get("mode") == mode
                and not r["params"].get("napi") and not r["params"].get("xdp")]
        for k in ("base", "series"):
            ax.plot([r["params"][key] for r in rows], [r[k]["value"] for r in rows], "o-", label=k)
        ax.set_xlabel(xl)
        ax.set_ylabel("guest instructions / packet" if doc["mode"] == "icount" else "pps")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle("s002: vhost-net TX into a tap, 64 B UDP to a drained socket")
    fig.tight_layout()
    fig.savefig(os.path.join(RES, "s002.png"), dpi=90)


def readme():
    seeds = json.load(open(os.path.join(TOP, "bench/seeds.json")))
    docs = {scen: json.load(open(p)) for scen in seeds
            for p in [os.path.join(RES, scen + ".json")] if os.path.exists(p)}
    heads = dict.fromkeys(d["kernels"]["series"]["head"] for d in docs.values())
    L = ["# Results", "", "Generated by `make bench` (scripts/report.py) from the whole "
         "stack's tables" + (", of series at " + ", ".join(heads) if heads else "") +
         ": a line a scenario, its figures base -> series from results/SCENARIO.md, "
         "whose top names the command and the code it measured.  So does every "
         "other table here (*.md); the other files are their data.", ""]
    for scen, seed in seeds.items():
        what = f"seed {seed['seed']}" if seed.get("seed") else "no seed thread"
        if scen not in docs:
            L.append(f"- **{scen}** ({what}): not measured yet.")
            continue
        doc = docs[scen]
        per = seed.get("per", "packet")
        ours = "; ".join(f"{r['case']}: {fmt(r['base']['value'], doc['mode'])} -> "
                         f"{fmt(r['series']['value'], doc['mode'])} ({r['change_pct']:+.1f}%)"
                         for r in doc["cases"])
        unit = f"instructions/{per}" if doc["mode"] == "icount" else f"{per}/s"
        claim = ""
        if seed.get("seed"):
            claim = " the seed claimed " + ", ".join(
                f"{a} {b:,}" for a, b in seed["rows"]) + f" {seed['unit']}."
        L.append(f"- **{scen}** ({what}, {seed['setup']}):{claim} Measured "
                 f"({doc['mode']}, {unit}, base -> series): {ours}.")
    open(os.path.join(RES, "README.md"), "w").write("\n".join(L) + "\n")


def native_sides(runs, scen, same_kernel_ok=False):
    """The base and series sides of a native comparison of scen, from the
    RUN.meta.json that scripts/native.sh wrote beside its runs; exits when
    they come from two machines, configs or command lines, or (unless
    same_kernel_ok) from one and the same kernel."""
    meta = {}
    for k in ("base", "series"):
        p = os.path.join(runs, scen, k + ".meta.json")
        if not os.path.exists(p):
            sys.exit(f"report: no {k} run of {scen} recorded in {runs}: run "
                     f"'make bench SCENARIO={scen} MODE=native RUN={k}' booted into {k}")
        meta[k] = json.load(open(p))
    b, s = meta["base"], meta["series"]
    differ = [f"{k} {b['machine'][k]} against {s['machine'][k]}"
              for k in b["machine"] if b["machine"][k] != s["machine"].get(k)]
    differ += [f"{k} {b[k]!r} against {s[k]!r}" for k in ("config", "cmdline") if b[k] != s[k]]
    if differ:
        sys.exit(f"report: base and series of {scen} were recorded on different machines, "
                 f"configs or command lines ({'; '.join(differ)}): compare two kernels "
                 "of one machine, built from one config, booted alike")
    if b["version"] == s["version"] and not same_kernel_ok:
        sys.exit(f"report: base and series of {scen} were recorded on one kernel "
                 f"({b['version']}): boot the other one before its run")
    return [(k, meta[k]["release"], f"config {meta[k]['config']}, recorded {meta[k]['date']}")
            for k in ("base", "series")], b["machine"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", required=True)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--command", required=True)
    cut = ap.add_mutually_exclusive_group()
    cut.add_argument("--stack", help="the series the stack is cut after (STACK=)")
    cut.add_argument("--alone", help="the series measured alone on base (ALONE=1)")
    cut.add_argument("--each", help="the series measured patch by patch (EACH=1)")
    ap.add_argument("--points", help="EACH=1: the patch numbers run, 0 for the tree below")
    ap.add_argument("--refs", help="EACH=1: the commit of each point")
    ap.add_argument("--out", help="the folder to write, instead of results/")
    ap.add_argument("--standin", help="kvm mode's pipeline test: what stood in for KVM")
    ap.add_argument("--same-kernel-ok", action="store_true",
                    help="native: base and series may be one kernel (the workbench's own test)")
    ap.add_argument("scenarios", nargs="+")
    a = ap.parse_args()
    seeds = json.load(open(os.path.join(TOP, "bench/seeds.json")))
    global RES
    if a.out:
        RES = os.path.abspath(a.out)
    elif a.mode == "native":
        RES = os.path.join(RES, "native")
    kernel, ref = "series", "series"
    head = None
    if a.stack:
        RES = os.path.join(RES, "stack-" + a.stack)
        kernel, ref = "stack", "stack/" + a.stack
    elif a.alone:
        RES = os.path.join(RES, "alone-" + a.alone)
        kernel, ref = "stack", "stack/" + a.alone
        # The picked commits are new on each run; their tree is not.
        tree = git("rev-parse", "--short", "HEAD^{tree}", tree="stack")
        head = (f"{ref}'s commits picked alone onto base, last "
                f"\"{git('log', '-1', '--format=%s', ref)}\" (tree {tree})")
    # What each results file compares: (file name, base side, series side),
    # a side being (run folder name, release, head).
    series_side = (kernel, release(kernel),
                   head or commit(ref))
    pairs = [("{}", ("base", release("base"), "base"), series_side)]
    names = ("base", "series")
    machine = None
    if a.each:
        RES = os.path.join(RES, "each-" + a.each)
        points, refs = a.points.split(), a.refs.split()
        sides = [(f"p{p}", release("stack"), commit(r) +
                  (f", the stack below {a.each}" if p == "0" else f", patch {p}"))
                 for p, r in zip(points, refs)]
        pairs = [("{}-" + p, sides[i], sides[i + 1]) for i, p in enumerate(points[1:])]
        names = ("before", "after")
    # every refusal before anything is written
    native = {scen: native_sides(a.runs, scen, a.same_kernel_ok)
              for scen in a.scenarios if a.mode == "native"}
    results, out = os.path.realpath(os.path.join(TOP, "results")), os.path.realpath(RES)
    if a.standin and (out == results or out.startswith(results + os.sep)):
        sys.exit(f"report: --standin {a.standin}: no figures, so nothing under {results}")
    bad, short, docs = [], [], []
    for scen in a.scenarios:
        if scen in native:
            sides, machine = native[scen]
            pairs = [("{}", *sides)]
        for name, (bk, brel, bhead), (sk, srel, shead) in pairs:
            name = name.format(scen)
            doc = {"scenario": scen, "command": a.command, "mode": a.mode, "names": names,
                   "kernels": {"base": {"release": brel, "head": bhead},
                               "series": {"release": srel, "head": shead}},
                   "cases": summarize(a.runs, scen, a.mode, sk, bk),
                   "skipped": skipped(a.runs, scen)}
            if machine:
                doc["machine"] = machine
            if a.standin:
                doc["standin"] = a.standin
            docs.append((scen, name, doc))
            if a.mode == "icount":
                short += [f"{name}/{r['case']}/{k}: {len(r[k]['runs'])}" for r in doc["cases"]
                          if timed(r, seeds[scen]) for k in ("base", "series")
                          if len(r[k]["runs"]) < TIMING_BOOTS]
                bad += [f"{name}/{r['case']}/{k}: {r[k]['spread_pct']:.3f}%" for r in doc["cases"]
                        if not lossy(r) and not timed(r, seeds[scen])
                        for k in ("base", "series") if r[k]["spread_pct"] > SPREAD_LIMIT]
    # the tables, for a look; written only when every figure repeated
    for scen, name, doc in docs:
        print(markdown(doc, seeds[scen]))
    if short:
        sys.exit(f"report: a timing row is left out of the check only over {TIMING_BOOTS} "
                 "boots of each kernel, nothing written: " + ", ".join(short))
    if bad:
        sys.exit("report: icount figures did not repeat within "
                 f"{SPREAD_LIMIT}%, nothing written: " + ", ".join(bad))
    os.makedirs(RES, exist_ok=True)
    for scen, name, doc in docs:
        json.dump(doc, open(os.path.join(RES, name + ".json"), "w"), indent=1)
        open(os.path.join(RES, name + ".md"), "w").write(markdown(doc, seeds[scen]))
        if scen == "s002" and not a.each:
            plot_s002(doc)
    if not (a.stack or a.alone or a.each or a.out or a.mode == "native"):
        readme()


main()
