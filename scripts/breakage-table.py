#!/usr/bin/env python3
"""The breakage table of docs/testing.md, from scripts/mutants.sh's records.

    python3 scripts/breakage-table.py          print the markdown table
    python3 scripts/breakage-table.py --docs   write it into docs/testing.md
    python3 scripts/breakage-table.py --check  is every breakage's record current,
                                               and docs/testing.md's table the records'?

Reads every records/mutants/*.jsonl (one JSON line per breakage and run of
scripts/mutants.sh) and keeps the latest record of each breakage (by its
date, then file name and line). The table has one row per breakage of
bpf/breakages.h that has a record, in that file's order: what it breaks, the
code it breaks (the files that test SCX_TICK_BREAK_<NAME>: BPF, Rust, the
userspace mode's Rust), the scenarios that failed for its reason (a FAIL line marked "[catches NAME]"),
those that passed or failed for another reason, the marked FAIL line(s), and
the record's commit and date. The breakages without a record are named
below the table. With no record at all it says so and exits 1.

--check exits 1 and lists each breakage of bpf/breakages.h that
  - has no record;
  - whose record's commit is older than the last commit that changed a
    file containing SCX_TICK_BREAK_<NAME> (the code the breakage touches;
    bpf/breakages.h itself, which declares them all, is left out, so a
    new breakage does not age every record). A record's commit with
    "+uncommitted" counts as its base commit; one git does not know is
    too old;
  - whose record was not caught by every scenario it had to be (missed, or
    failed for another reason);
  - whose record's scenarios are no longer those whose "# Catches:" line
    names it;
and when the table between docs/testing.md's markers is not the one the
records give (--docs rewrites it). Rerun stale breakages with
`scripts/mutants.sh NAME...`. tests/host/breakage_records_are_current.sh
runs --check in the suite (the rows themselves are not rerun there).
"""
import functools
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECL = re.compile(r"^#define (SCX_TICK_BREAK_[A-Z_]+) 0 /\* ([a-z-]+): (.*?) \*/\s*$")
MARK = re.compile(r"^FAIL \[catches [^\]]*\]: ")
DOCS = os.path.join(ROOT, "docs/testing.md")
BEGIN = "<!-- breakage table: python3 scripts/breakage-table.py --docs writes it from records/mutants/ -->"
END = "<!-- end of the breakage table -->"


def breakages():
    """[(name, macro, what)] in bpf/breakages.h's order."""
    out = []
    with open(os.path.join(ROOT, "bpf/breakages.h")) as f:
        for line in f:
            m = DECL.match(line)
            if m:
                out.append((m.group(2), m.group(1), m.group(3)))
    return out


def catches():
    """breakage -> the scenarios whose "# Catches:" line names it, today
    ("# Catches on the oldest kernel:": its oldest/ run)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/*/*.sh"))):
        name = os.path.relpath(path, os.path.join(ROOT, "tests"))[: -len(".sh")]
        with open(path, errors="replace") as f:
            for line in f:
                for tag, run in (("# Catches:", name), ("# Catches on the oldest kernel:", "oldest/" + name)):
                    if line.startswith(tag):
                        for b in line[len(tag):].split():
                            out.setdefault(b, []).append(run)
    return out


def latest_records():
    """breakage -> its latest record."""
    best = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "records/mutants/*.jsonl"))):
        with open(path, errors="replace") as f:
            for i, line in enumerate(f):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    key = (rec["date"], os.path.basename(path), i)
                    b = rec["breakage"]
                except (ValueError, KeyError, TypeError):
                    print(f"{os.path.relpath(path, ROOT)}:{i + 1}: not a breakage record, skipped", file=sys.stderr)
                    continue
                if b not in best or key > best[b][0]:
                    best[b] = (key, rec)
    return {b: rec for b, (_, rec) in best.items()}


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def scenarios(names):
    return ", ".join(f"`{s}`" for s in names) or "none"


@functools.lru_cache(maxsize=None)
def code(macro):
    """The files that test the breakage's switch (its declaration left out,
    and records/: a probe's prototype diff quotes the code, it is not code);
    --check asks twice per breakage (its table, its staleness): one git grep."""
    files = git("grep", "-lw", macro, "--", ".", ":(exclude)bpf/breakages.h", ":(exclude)records").stdout.split()
    return tuple(files or ["bpf/breakages.h"])


def row(name, macro, what, rec):
    missed = [f"`{s}` passed" for s in rec.get("missed_by", [])]
    missed += [f"`{o['scenario']}`: {cell(o['failure'])}" for o in rec.get("other_reason", [])]
    why = [f"`{r['scenario']}`: {cell(MARK.sub('', r['failure']))}" for r in rec.get("reasons", [])]
    date = str(rec.get("date", "?"))[:16].replace("T", " ")
    where = ", ".join(f"`{f}`" for f in code(macro))
    return (f"| `{name}` | {cell(rec.get('what') or what)} | {where} | {scenarios(rec.get('caught_by', []))} | "
            f"{'; '.join(missed) or 'none'} | {'; '.join(why) or '-'} | {cell(rec.get('commit', '?'))} | {date} |")


def table(decl, recs, must):
    """The table's lines (and a line naming the breakages without a record)."""
    out = ["| breakage (`SCX_TICK_BREAK`) | what it breaks | code | caught by (failed for its reason) "
           "| missed, or failed for another reason | why (the marked FAIL lines) | commit | date |",
           "|---|---|---|---|---|---|---|---|"]
    for name, macro, what in decl:
        if name in recs:
            out.append(row(name, macro, what, recs[name]))
    none = [f"`{n}`" + ("" if must.get(n) else " (no scenario catches it)") for n, _, _ in decl if n not in recs]
    if none:
        out += ["", f"No record: {', '.join(none)}."]
    return out


def docs_block():
    """docs/testing.md's lines, and the index range of its table between the markers."""
    with open(DOCS) as f:
        lines = f.read().split("\n")
    try:
        i, j = lines.index(BEGIN), lines.index(END)
    except ValueError:
        return lines, None
    return lines, (i + 1, j) if i < j else None


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)


def check(decl, recs, must):
    problems = []
    lines, block = docs_block()
    if block is None:
        problems.append(f"docs/testing.md: no table between the markers {BEGIN!r} and {END!r}")
    elif lines[block[0]:block[1]] != table(decl, recs, must):
        problems.append("docs/testing.md: its breakage table is not the records' "
                        "(python3 scripts/breakage-table.py --docs rewrites it)")
    for name, macro, _ in decl:
        rec = recs.get(name)
        if rec is None:
            hint = "" if must.get(name) else " (no scenario names it in a \"# Catches:\" line)"
            problems.append(f"{name}: no record{hint}")
            continue
        files = code(macro)
        last = git("log", "-1", "--format=%H", "--", *files).stdout.strip()
        commit = str(rec.get("commit", "")).split("+")[0]
        if last:
            anc = git("merge-base", "--is-ancestor", last, commit).returncode if commit else 128
            if anc == 1:
                when = git("log", "-1", "--format=%h (%cs)", last).stdout.strip()
                problems.append(f"{name}: its record ({rec.get('commit')}, {rec.get('date')}) is older than "
                                f"{when}, the last change to {' '.join(files)}")
            elif anc != 0:
                problems.append(f"{name}: its record's commit {rec.get('commit')!r} is not one of this repository's")
        bad = [f"{s} passed" for s in rec.get("missed_by", [])]
        bad += [f"{o['scenario']} failed for another reason ({o['failure']})" for o in rec.get("other_reason", [])]
        if bad:
            problems.append(f"{name}: not caught by every scenario that names it: {'; '.join(bad)}")
        if sorted(rec.get("must", [])) != sorted(must.get(name, [])):
            problems.append(f"{name}: its record ran {' '.join(rec.get('must', [])) or 'no scenario'}; "
                            f"today {' '.join(must.get(name, [])) or 'none'} name it")
    for p in problems:
        print(p)
    if problems:
        names = sorted({p.split(":")[0] for p in problems} - {"docs/testing.md"})
        if names:
            print(f"\n{len(names)} of {len(decl)} breakages without a current record that shows them caught "
                  f"(scripts/mutants.sh NAME... reruns them)", file=sys.stderr)
        return 1
    print(f"all {len(decl)} breakages have a current record, caught by every scenario that names them")
    return 0


def main():
    args = sys.argv[1:]
    if args not in ([], ["--check"], ["--docs"]):
        print(__doc__, file=sys.stderr)
        return 2
    decl = breakages()
    if not decl:
        print("no breakage found in bpf/breakages.h", file=sys.stderr)
        return 1
    recs, must = latest_records(), catches()
    for b in sorted(set(recs) - {name for name, _, _ in decl}):
        print(f"record of {b}: no longer a breakage of bpf/breakages.h, left out", file=sys.stderr)
    if args == ["--check"]:
        return check(decl, recs, must)
    if not recs:
        print("no records in records/mutants/ (scripts/mutants.sh writes them)", file=sys.stderr)
        return 1
    rows = table(decl, recs, must)
    if args == ["--docs"]:
        lines, block = docs_block()
        if block is None:
            print(f"docs/testing.md: no markers {BEGIN!r} and {END!r} to write the table between", file=sys.stderr)
            return 1
        lines[block[0]:block[1]] = rows
        with open(DOCS, "w") as f:
            f.write("\n".join(lines))
        return 0
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
