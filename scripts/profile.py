#!/usr/bin/env python3
"""Guest instructions per packet per kernel function, from two runs of one
bench command that differ only in their packet count (scripts/profile.sh).
Each run folder holds "tbcount" (bench/tbcount.so: "vaddr_hex insns" per
translation block, counted from the getrusage() before the program's timed
loop to the one after) and "output" (the program's JSON line).  What is
not the loop costs the same in both runs, so the difference divided by the
extra packets is the per-packet cost."""
import argparse
import bisect
import fnmatch
import json
import os
import sys

# Areas for --areas, first match wins.
AREAS = [
    ("user space", ["(user space)"]),
    ("vhost", ["vhost*", "handle_tx*", "handle_rx*", "get_tx_bufs*",
               "translate_desc"]),
    ("tun", ["tun*", "__tun*"]),
    ("netdev core", ["*netif_*", "napi_*", "*gro_*", "net_rx_action",
                     "process_backlog", "*dev_*", "eth_type_trans",
                     "*flow_dissect*"]),
    ("xdp/bpf", ["*xdp*", "*bpf*", "sk_filter*"]),
    ("udp", ["*udp*"]),
    ("ip", ["ip_*", "ip4_*", "ipv4_*", "__ip_*", "inet_*", "fib_*",
            "raw_local_deliver"]),
    ("user copy", ["*copy_*", "rep_movs*", "*_iter", "iov_iter_*",
                   "*import_*", "__get_user*", "__put_user*"]),
    ("allocator", ["*kmem_cache*", "*kmalloc*", "kfree*", "*slab*",
                   "*page_frag*", "*alloc_pages*", "*frozen_page*",
                   "get_page_from_freelist", "*freelist*", "refill_objects",
                   "__rmqueue*"]),
    ("skb", ["*skb*"]),
    ("socket/syscall", ["*sys_*", "*recvm*msg*", "*sendm*msg*", "sock_*",
                        "sk_*", "__sk_*", "entry_SYSCALL*", "do_syscall_64",
                        "syscall_*", "x64_sys_call", "fdget*", "*poll*"]),
    ("sched/timers", ["*sched*", "*wake*", "*task*", "*entity*", "*update_*",
                      "pick_*", "*switch_*", "*vruntime*", "*hrtimer*",
                      "ktime_*"]),
    ("locks/rcu", ["_raw_spin*", "*rcu*", "*local_bh*"]),
]


def load_map(path):
    """Sorted text symbols of a System.map, and where the image ends."""
    syms, end = [], 0
    for line in open(path):
        addr, kind, name = line.split()[:3]
        if kind in "tTwW":
            syms.append((int(addr, 16), name))
        elif name == "_end":
            end = int(addr, 16)
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms], end


def per_symbol(run, addrs, names, end):
    counts = {}
    for line in open(os.path.join(run, "tbcount")):
        vaddr, insns = line.split()
        vaddr, insns = int(vaddr, 16), int(insns)
        i = bisect.bisect_right(addrs, vaddr) - 1
        if vaddr < 1 << 63:  # x86-64 kernel addresses have the top bit set
            name = "(user space)"
        elif i < 0 or vaddr >= end:
            name = "(kernel, no symbol)"  # e.g. BPF JIT code
        else:
            name = names[i]
        counts[name] = counts.get(name, 0) + insns
    return counts


def program_result(run):
    """The last JSON line the bench program printed."""
    res = None
    for line in open(os.path.join(run, "output")):
        if line.startswith("{"):
            res = json.loads(line)
    if res is None:
        sys.exit(f"profile.py: no JSON result in {run}/output")
    return res


def area(name):
    for a, pats in AREAS:
        if any(fnmatch.fnmatchcase(name, p) for p in pats):
            return a
    return "other"


def table(rows, total, head):
    out = [f"| {head} | insns/pkt | share |", "|---|---:|---:|"]
    for name, v in rows:
        out.append(f"| {name} | {v:.1f} | {100 * v / total:.1f}% |")
    return out


def per_packet(syms, run1, run2):
    """Instructions per extra packet of each symbol, between a run and one
    with more packets; with both runs' program results."""
    c1, c2 = (per_symbol(r, *syms) for r in (run1, run2))
    r1, r2 = program_result(run1), program_result(run2)
    extra = r2["packets"] - r1["packets"]
    if extra <= 0:
        sys.exit("profile.py: the second run must send more packets")
    diff = {s: (c2.get(s, 0) - c1.get(s, 0)) / extra for s in set(c1) | set(c2)}
    return diff, r1, r2


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--map", required=True, help="the kernel's System.map")
    ap.add_argument("--top", type=int, default=15, help="functions to list")
    ap.add_argument("--areas", action="store_true", help="also sum by area")
    ap.add_argument("--out", help="write this markdown file too")
    ap.add_argument("--command", help="the command to name at the top of --out")
    ap.add_argument("--kernel", help="the kernel profiled, to name beside it")
    ap.add_argument("--tree", help="that kernel's tree, where it has one")
    ap.add_argument("run1")
    ap.add_argument("run2", help="the run with more packets")
    a = ap.parse_args()

    diff, r1, r2 = per_packet(load_map(a.map), a.run1, a.run2)
    extra = r2["packets"] - r1["packets"]
    total = sum(diff.values())
    own = (r2["ns"] - r1["ns"]) / extra

    rows = sorted(diff.items(), key=lambda kv: -kv[1])
    out = table(rows[:a.top], total, "function")
    if a.areas:
        by = {}
        for s, v in diff.items():
            by[area(s)] = by.get(area(s), 0) + v
        out += [""] + table(sorted(by.items(), key=lambda kv: -kv[1]), total, "area")
    out += ["",
            f"Total: {total:.1f} guest instructions per packet "
            f"({total - diff.get('(user space)', 0):.1f} in the kernel), "
            f"over {extra} extra packets.",
            f"The program's own figure, (ns2 - ns1) / extra packets in icount "
            f"mode: {own:.1f} ({100 * (total - own) / own:+.1f}%); "
            f"ns/packets per run: {r1['ns'] / r1['packets']:.1f}, "
            f"{r2['ns'] / r2['packets']:.1f}."]
    print("\n".join(out))
    if abs(total - own) > 0.03 * own:
        print("profile.py: the counts and the program's ns disagree by more "
              "than 3%: was the guest idle in the loop?", file=sys.stderr)
    if a.out:
        with open(a.out, "w") as f:
            f.write(f"# {os.path.basename(a.out)[:-3]}\n\n"
                    f"Generated by `{a.command}` on {a.kernel}"
                    f"{f' (tree {a.tree})' if a.tree else ''}.\n\n"
                    "Guest instructions per packet per kernel function, in "
                    "icount mode: a TCG plugin counts the instructions of each "
                    "translation block run in the program's timed loop, mapped "
                    "to System.map symbols; of two runs differing only in "
                    "their packet count, the difference divided by the extra "
                    "packets.\n\n" + "\n".join(out) + "\n")


if __name__ == "__main__":
    main()
