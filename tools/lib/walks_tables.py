"""Page walks per operation (vm.walks=count) and the cost model built on them,
for the address-space chapter: the runs (run_bench, SUITE, all_configs), the
walks.csv they give, the checks of the tests bench.walks (check) and
book.walks.measured_fresh (fresh), and walks.inc (render). The program
tools/walks-tables runs them; tools/bench --book renders walks.inc too.

A walk here is a translation whose accessed bit the MMU set since the previous
CR3 load (src/arch/i386/walks.cpp): each page is counted once per stretch
between loads, so it is a lower bound on the TLB misses real hardware takes.
"""

import csv
import os
import subprocess
import tempfile
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATED = os.path.join(ROOT, "book", "generated")
LAYOUTS = ["3/1", "3/1-pti", "4/4"]
EMUS = ["qemu", "bochs"]
GLOBAL = [("global on", ""), ("global off", " vm.global=off")]
# Where walks.inc says its numbers come from.
SOURCE = "vm.walks=count runs (tools/bench) and make bench"
# Whose walks the cost model uses: the emulator whose TLB keeps global
# translations across a CR3 load, as hardware does.
MODEL_EMU = "bochs"

# A result row of tools/bench's results.csv, its value an int.
Row = dict[str, Any]
# (configuration, metric) -> walks per operation.
Walks = dict[tuple[str, str], float]
# (configuration name, kernel command line, emulator).
Config = tuple[str, str, str]
# (bench name, program, arguments).
Bench = tuple[str, str, list[str]]

# (bench name, program, arguments): iteration counts are small because every
# CR3 load scans the page tables in this mode.
SUITE: list[Bench] = [
    ("lat_syscall", "lat_syscall", ["-n", "200"]),
    ("bw_null", "bw_null", ["-n", "200", "5"]),
    ("bw_zero", "bw_zero", ["-n", "200", "5"]),
    ("bw_pipe_tiny", "bw_pipe_tiny", ["-n", "200", "1"]),
    ("lat_pipe", "lat_pipe", ["-n", "100"]),
    ("lat_ctx.2p_0k", "lat_ctx", ["-n", "50", "2", "0"]),
    ("netblast", "netblast", ["-n", "200", "127.0.0.1", "5001", "5", "10"]),
]

# The operations reported: (metric, words, 4/4-against-3/1 factor the seeds
# measured on hardware, or None).
OPS: list[tuple[str, str, float | None]] = [
    ("lat_syscall.getppid", "null system call", None),
    ("bw_null.5", "5-byte write to /dev/null", None),
    # Seed 000: netblast to localhost, 537 kpps before the 4/4 change, 136 after.
    ("netblast.loopback.5", "5-byte UDP send to 127.0.0.1 (netblast)", round(537 / 136, 1)),
    ("bw_zero.5", "5-byte read of /dev/zero", 6.0),
    ("bw_pipe_tiny.1", "1-byte pipe write+read", None),
    ("lat_pipe.roundtrip", "pipe round trip", 25.0),
    ("lat_ctx.2p_0k.hop", "lat_ctx hop (write, switch, read)", None),
]
WALKS = "vm.walks.translations"

# The refill costs the model is evaluated at, in cycles per walk. The first is
# published: Intel's VTune tuning assistant for the Pentium 4 prices each page
# walk at 30 clock ticks ([IntelVTuneP4] in the bibliography). The second is
# this book's assumption for walks whose entries are not in the first-level
# cache. Neither is a measurement of Toll; the chapter says so.
REFILL_CYCLES = [30, 100]


def config_name(emu: str, layout: str, glob: str) -> str:
    return f"{emu} {layout} {glob}"


def run_bench(build: str, configs: list[Config], suite: list[Bench], out_dir: str,
              jobs: int) -> list[Row]:
    """Runs @suite in @configs through tools/bench; returns its result rows."""
    with tempfile.TemporaryDirectory() as tmp:
        configs_path = os.path.join(tmp, "configs.toml")
        suite_path = os.path.join(tmp, "suite.toml")
        with open(configs_path, "w") as f:
            for name, cmdline, emu in configs:
                f.write(f'[[config]]\nname = "{name}"\ncmdline = "{cmdline}"\nemu = "{emu}"\n\n')
        with open(suite_path, "w") as f:
            for name, program, args in suite:
                quoted = ", ".join(f'"{a}"' for a in args)
                f.write(f'[[bench]]\nname = "{name}"\nprogram = "{program}"\nargs = [{quoted}]\n'
                        f'timeout = 300\n\n')
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "bench"),
                        "--build", build, "--configs", configs_path, "--suite", suite_path,
                        "--out", out_dir, "-j", str(jobs)], check=True)
    return read_rows(os.path.join(out_dir, "results.csv"))


def read_rows(path: str) -> list[Row]:
    with open(path, newline="") as f:
        return [dict(r, value=int(r["value"])) for r in csv.DictReader(f)]


def walks_per_op(rows: list[Row]) -> Walks:
    """{(configuration, metric): walks per operation} (absent counters are 0)."""
    out: Walks = {}
    for r in rows:
        if r["metric"].endswith("." + WALKS):
            out[(r["configuration"], r["metric"][:-len(WALKS) - 1])] = r["value"] / 1000
    return out


def read_walks_csv(path: str) -> Walks:
    """{(configuration, metric): walks per operation} from a walks.csv."""
    with open(path, newline="") as f:
        return {(r["configuration"], r["metric"]): float(r["walks_per_op"])
                for r in csv.DictReader(f)}


def fmt(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def list_table(title: str, header: list[str], body: list[list[str]]) -> list[str]:
    lines = [f".. list-table:: {title}", "   :header-rows: 1", ""]
    for row in [header] + body:
        lines.append("   * - " + str(row[0]))
        lines.extend("     - " + (str(c) if str(c) else "..") for c in row[1:])
    return lines + [""]


def render(walks: Walks, bench_rows: list[Row], source: str) -> str:
    instr = {(r["configuration"], r["metric"]): r["value"] for r in bench_rows
             if r["unit"] == "instr"}
    out = [f".. Generated by tools/lib/walks_tables.py from {source}; do not edit by hand.", ""]
    # Walks per operation, every emulator, layout and global setting.
    body = []
    for emu in EMUS:
        for layout in LAYOUTS:
            for glob, _ in GLOBAL:
                name = config_name(emu, layout, glob)
                body.append([f"{emu}, ``{layout}``, {glob}"] +
                            [fmt(walks.get((name, m), 0.0)) for m, _, _ in OPS])
    out += list_table("Page walks per operation (translations walked between CR3 loads, "
                      "vm.walks=count)", ["emulator, layout, global pages"] +
                      [f"{w} (``{m}``)" for m, w, _ in OPS], body)
    # The cost model: Bochs's walks with global pages on (the kernel's
    # setting). Bochs keeps global translations across a CR3 load, as
    # hardware does; QEMU drops them, and so counts walks hardware would not
    # take.
    body = []
    for m, words, seed in OPS:
        base_i = instr.get(("3/1", m))
        if base_i is None:
            continue
        base_w = walks.get((config_name(MODEL_EMU, "3/1", "global on"), m), 0.0)
        for layout in LAYOUTS[1:]:
            i = instr.get((layout, m))
            w = walks.get((config_name(MODEL_EMU, layout, "global on"), m), 0.0)
            if i is None:
                continue
            cells = [f"{words}, ``{layout}``", f"{i / base_i:.2f}", fmt(w - base_w)]
            cells += [f"{(i + w * c) / (base_i + base_w * c):.2f}" for c in REFILL_CYCLES]
            implied = ""
            if seed and layout == "4/4":
                denominator = w - seed * base_w
                value = (seed * base_i - i) / denominator if denominator > 0 else None
                implied = (f"{value:,.0f} (for {seed:g}x)" if value and value > 0
                           else f"none reaches {seed:g}x")
            cells.append(implied)
            body.append(cells)
    # Toll against Linux (tools/bench --linux): the same programs, the same emulator.
    linux_ops = [("lat_syscall.getppid", "null system call"),
                 ("lat_pipe.roundtrip", "pipe round trip"),
                 ("lat_ctx.2p_0k.hop", "lat_ctx hop (write, switch, read)"),
                 ("lat_fork_exit.fork_exit_wait", "fork + exit + wait"),
                 ("lat_exec.fork_exec_exit", "fork + exec + exit")]
    columns = [c for c in ["linux", "linux-pti"] + LAYOUTS
               if any(k[0] == c for k in instr)]
    if "linux" in columns:
        against = [[f"{words} (``{m}``)"] + [f"{instr[(c, m)]:,}" if (c, m) in instr else ""
                                             for c in columns] for m, words in linux_ops]
        out += list_table("Instructions per operation: Debian's i386 Linux (int $0x80, "
                          "pti off and on) and Toll, the same programs, deterministic mode",
                          ["operation"] + [f"``{c}``" for c in columns], against)
    out += list_table("The cost model: (instructions + walks x refill cost) against 3/1, "
                      "Bochs's walks, global pages on",
                      ["operation, layout", "instructions / 3/1", "extra walks"] +
                      [f"model at {REFILL_CYCLES[0]} cycles/walk (Intel's Pentium 4 figure)",
                       f"model at {REFILL_CYCLES[1]} cycles/walk (assumed)"] +
                      ["refill cost the seed's factor implies"], body)
    return "\n".join(out)


def write_csv(rows: list[Row], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["configuration", "metric", "walks_per_op"])
        for (config, metric), v in sorted(walks_per_op(rows).items()):
            w.writerow([config, metric, f"{v:.3f}"])


def all_configs() -> list[Config]:
    return [(config_name(emu, layout, glob), f"vm.split={layout} vm.walks=count{extra}", emu)
            for emu in EMUS for layout in LAYOUTS for glob, extra in GLOBAL]


def check(build: str) -> list[str]:
    """The make check test; returns the problems found."""
    configs = [(config_name("qemu", layout, "global on"), f"vm.split={layout} vm.walks=count",
                "qemu") for layout in ("3/1", "4/4")]
    suite = [b for b in SUITE if b[0] in ("lat_syscall", "lat_ctx.2p_0k")]
    with tempfile.TemporaryDirectory() as out:
        rows = run_bench(build, configs, suite, out, 2)
    walks = walks_per_op(rows)
    # tools/bench reports only the counters that moved, so a missing row is
    # a count of 0; the context switch proves that 3/1 counts at all (it
    # loads CR3, and the other process's pages are walked after it).
    flat = walks.get((configs[0][0], "lat_syscall.getppid"), 0.0)
    flat_switch = walks.get((configs[0][0], "lat_ctx.2p_0k.hop"), 0.0)
    isolated = walks.get((configs[1][0], "lat_syscall.getppid"), 0.0)
    problems = []
    if flat_switch < 1:
        problems.append(f"3/1 walked {flat_switch} translations per context switch; a switch "
                        "loads CR3, so vm.walks=count must see the walks after it")
    if flat != 0:
        problems.append(f"3/1 walked {flat} translations per null system call; with no CR3 "
                        "load the TLB stays warm and the count must be 0")
    if isolated < 1:
        problems.append(f"4/4 walked {isolated} translations per null system call; its two "
                        "CR3 loads flush the TLB, so at least the user's code page is walked")
    if not problems:
        print(f"walks per null system call: 3/1 {flat:g}, 4/4 {isolated:g}; "
              f"per 3/1 context switch: {flat_switch:g}")
    return problems


def fresh(build: str) -> list[str]:
    """The walks of book/generated/walks.csv are today's: boots every QEMU
    configuration (the Bochs ones take minutes; tools/walks-tables run
    refreshes them) and compares each count. Returns the problems found."""
    book = read_walks_csv(os.path.join(GENERATED, "walks.csv"))
    configs = [c for c in all_configs() if c[2] == "qemu"]
    with tempfile.TemporaryDirectory() as out:
        now = walks_per_op(run_bench(build, configs, SUITE, out, 2))
    problems = []
    # QEMU sizes its software TLB by how busy it was over host time, so a
    # long run's count can move by a fraction of a walk from run to run; a
    # kernel change that adds or removes a page on a path moves it by whole
    # walks per operation.
    for key in sorted(set(now) | {k for k in book if k[0].startswith("qemu ")}):
        if abs(now.get(key, 0.0) - book.get(key, 0.0)) > max(0.0005, 0.02 * book.get(key, 0.0)):
            problems.append(f"{key[0]}, {key[1]}: the book says {book.get(key, 0.0):.3f} walks, "
                            f"the kernel now walks {now.get(key, 0.0):.3f}; run "
                            "tools/walks-tables run")
    if not problems:
        print(f"walks.csv: all {len(now)} QEMU counts are today's")
    return problems


def rendered_inc() -> str:
    """walks.inc as book/generated/walks.csv and results.csv give it."""
    return render(read_walks_csv(os.path.join(GENERATED, "walks.csv")),
                  read_rows(os.path.join(GENERATED, "results.csv")), SOURCE)


def write_inc() -> str:
    """Writes book/generated/walks.inc from the data beside it; returns its path."""
    path = os.path.join(GENERATED, "walks.inc")
    with open(path, "w") as f:
        f.write(rendered_inc())
    return path
