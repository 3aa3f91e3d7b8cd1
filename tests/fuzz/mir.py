"""The MIR reader's fuzz campaign: `python -m tests.fuzz.mir [--long] [--per-target N]`.

Real MIR text (tests/data/mir/*.mir, examples/*.mir), mutated as text the compiler or a
person might get wrong: lines deleted, swapped or repeated, the text cut short, stray
characters, CRLF line endings and a byte-order mark, huge numbers, deep nesting (types,
tuples, parentheses). Each input goes through `placement lower` and `placement run` as a
whole process (`child`, as in `python -m tests.fuzz`); on top of that campaign's rules
(exit 0/3/4/5, no traceback, no hang, no partial output, a valid lowered plan), every
line of an exit-3 message must carry the input's position, `FILE:LINE:COL: `. Exit
status 1 when anything was found.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tests.fuzz.child import Config, preload, run_child
from tests.fuzz.gen import ROOT
from tests.fuzz.judge import Outcome, judge, outcome
from tests.fuzz.report import print_findings, run_jobs, table

SOURCES = tuple(sorted((ROOT / "tests" / "data" / "mir").glob("*.mir"))) + tuple(
    sorted((ROOT / "examples").glob("*.mir"))
)
COMMANDS = ("lower", "run")
KINDS = (
    "delete-lines",
    "swap-lines",
    "repeat-lines",
    "truncate",
    "stray",
    "crlf-bom",
    "numbers",
    "nesting",
    "locals",
    "mixed",
)
_STRAY = "{}()[]<>%:,=-|&!~?.\"'\\#@$;/*\t\r\x00\x0b\u00e9\u202e\u2028\ufeff0123456789 _"
_NUMBER = re.compile(r"(?<=[%b ])\d+|(?<=\()\d+|(?<=: )\d+")
_HUGE = (
    "4294967296",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "9" * 40,
    "9" * 41,
    "1" + "0" * 400,
    "1e400",
    "0.0000000000000001e-400",
)


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _delete(text: str, r: random.Random) -> str:
    lines = _lines(text)
    for _ in range(r.randint(1, 3)):
        if len(lines) > 1:
            del lines[r.randrange(len(lines))]
    return "\n".join(lines)


def _swap(text: str, r: random.Random) -> str:
    lines = _lines(text)
    i = r.randrange(len(lines))
    j = min(len(lines) - 1, i + 1) if r.random() < 0.5 else r.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _repeat(text: str, r: random.Random) -> str:
    lines = _lines(text)
    i = r.randrange(len(lines))
    lines[i:i] = [lines[i]] * r.choice((1, 2, 50))
    return "\n".join(lines)


def _truncate(text: str, r: random.Random) -> str:
    # keep something that is not blank: an empty file is another input's business
    first = len(text) - len(text.lstrip()) + 1
    return text[: r.randint(first, max(first, len(text) - 1))]


def _stray(text: str, r: random.Random) -> str:
    chars = list(text)
    for _ in range(r.randint(1, 5)):
        chars.insert(r.randint(0, len(chars)), r.choice(_STRAY))
    return "".join(chars)


def _numbers(text: str, r: random.Random) -> str:
    spots = list(_NUMBER.finditer(text))
    if not spots:
        return text + r.choice(_HUGE)
    picked = r.sample(spots, min(len(spots), r.randint(1, 3)))
    for m in sorted(picked, key=lambda m: -m.start()):  # from the end: offsets hold
        text = text[: m.start()] + r.choice(_HUGE) + text[m.end() :]
    return text


def _nesting(text: str, r: random.Random) -> str:
    depth = r.choice((30, 200, 1100, 20000))
    lines = _lines(text)
    i = r.randrange(len(lines))
    line = lines[i]
    how = r.random()
    if "let %" in line and ":" in line and how < 0.5:
        head, _, ty = line.partition(": ")
        wrap = r.choice((("List<", ">"), ("(", ",)"), ("(", ")"), ("Dict<Integer, ", ">")))
        lines[i] = head + ": " + wrap[0] * depth + ty + wrap[1] * depth
    elif " = " in line:
        lhs, _, rhs = line.partition(" = ")
        lines[i] = lhs + " = " + "(" * depth + rhs + ")" * depth
    else:
        lines.insert(i, "    " + r.choice(("(", "{", "[", "<", "|>")) * depth)
    return "\n".join(lines)


_LOCAL = re.compile(r"%(\d+)")
_TARGET = re.compile(r"(bb\d+)\(([^()]*)\)")


def _locals(text: str, r: random.Random) -> str:
    """Text that reads but does not check: a local renumbered (used before it is
    defined, or of another type), a block given one argument more or less, a field
    position past a tuple's end."""
    how = r.random()
    spots = list(_LOCAL.finditer(text))
    if how < 0.5 and spots:
        m = r.choice(spots)
        return f"{text[: m.start(1)]}{r.randint(0, int(m[1]) + 2)}{text[m.end(1) :]}"
    if how < 0.8:
        spots = [m for m in _TARGET.finditer(text) if "->" in text[m.start() - 40 : m.start()]]
        if spots:
            m = r.choice(spots)
            args = [a for a in m[2].split(",") if a.strip()]
            args = args[:-1] if args and r.random() < 0.5 else [*args, " %0"]
            return f"{text[: m.start(2)]}{','.join(args).strip()}{text[m.end(2) :]}"
    spots = list(re.finditer(r"%\d+\.(\d+)", text))
    if not spots:
        return text
    m = r.choice(spots)
    return f"{text[: m.start(1)]}{int(m[1]) + r.randint(1, 5)}{text[m.end(1) :]}"


def _crlf_bom(text: str, r: random.Random) -> str:
    text = text.replace("\n", "\r\n")
    if r.random() < 0.5:
        text = "\ufeff" + text
    if r.random() < 0.3:  # and something else wrong in it, to see the position
        text = r.choice(_MUTATORS[:5])(text, r)
    return text


_MUTATORS = (_delete, _swap, _repeat, _truncate, _stray, _numbers, _nesting, _locals)
_BY_KIND = {
    "delete-lines": _delete,
    "swap-lines": _swap,
    "repeat-lines": _repeat,
    "truncate": _truncate,
    "stray": _stray,
    "crlf-bom": _crlf_bom,
    "numbers": _numbers,
    "nesting": _nesting,
    "locals": _locals,
}


def mutate(kind: str, index: int, seed: int) -> tuple[bytes, str]:
    """The input (kind, index) of the campaign `seed`: (MIR text bytes, source name)."""
    r = random.Random(f"{seed}:mir:{kind}:{index}")
    src = r.choice(SOURCES)
    text = src.read_text()
    if kind == "mixed":
        for _ in range(r.randint(2, 4)):
            text = r.choice(_MUTATORS)(text, r)
    else:
        text = _BY_KIND[kind](text, r)
    return text.encode("utf-8", "surrogatepass"), src.name


def judge_mir(
    code: int, stderr: bytes, source: str, found: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The campaign's rules (`found`, from `judge.judge`), with its error-line rule made
    stricter: every line of an exit-3 message is `SOURCE:LINE:COL: message`. A mutation
    that leaves several filter bodies makes `lower -o` ask for `--body` (exit 2, the one
    usage error it may give)."""
    if code == 2 and b"bodies to place" in stderr and b"--body" in stderr:
        return [f for f in found if f[0] != "exit-2"]
    if code != 3:
        return found
    found = [f for f in found if f[0] != "bad-error-line"]
    err = stderr.decode("utf-8", "replace")
    prefix = re.compile(re.escape(source) + r":\d+:\d+: ")
    # the one message about no position at all: a file of only blanks (`run` says so
    # before it reads the text as anything)
    empty = f"{source}: empty file"
    bad = [ln for ln in err.split("\n")[:-1] if not prefix.match(ln) and ln != empty]
    if bad or not err.endswith("\n"):
        line = bad[0] if bad else err[-80:]
        if line.startswith(source + ": "):
            line = line[len(source) + 2 :]
        sig = re.sub(r"\d+", "N", re.sub(r"'[^']*'", "…", line))[:160]
        found.append(("no-position", sig))
    return found


class MirFuzzer:
    def __init__(self, cfg: Config, seed: int, workdir: Path | None = None) -> None:
        if not cfg.spawn:
            preload()
        self.cfg = cfg
        self.seed = seed
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="placement-fuzz-mir-"))
        self.workdir.mkdir(parents=True, exist_ok=True)

    def run(self, command: str, index: int) -> Outcome:
        kind = KINDS[index % len(KINDS)]
        data, name = mutate(kind, index, self.seed)
        job = Path(tempfile.mkdtemp(dir=self.workdir, prefix=f"{command}-"))
        try:
            (job / "input.mir").write_bytes(data)
            r = random.Random(f"{self.seed}:mir-args:{command}:{index}")
            stdin, src = os.devnull, "input.mir"
            if command == "lower":
                if r.random() < 0.2:
                    stdin, src = str(job / "input.mir"), "-"
                args = [command, src, "-o", "out/a.json"]
                (job / "out").mkdir()  # -o creates no folder
                if src == "-":
                    args += ["--from", "hashql-mir"]
                if r.random() < 0.5:
                    args += ["--split", r.choice(("runs", "intersection", "per-statement"))]
                if r.random() < 0.2:
                    args += ["--size-cap", r.choice(("0", "64"))]
                out, out_dir = job / "out" / "a.json", None
            else:
                args = [command, src, "--out-dir", "out", "--time-limit", str(self.cfg.time_limit)]
                out, out_dir = None, job / "out"
            if r.random() < 0.15:
                args += ["--diagnostics", "json"]
            code, stdout, stderr, seconds, hung = run_child(self.cfg, args, stdin, job)
            source = "<stdin>" if src == "-" else src
            if "--diagnostics" in args and code == 3:
                stderr = _json_as_text(stderr)
            found = judge(command, code, stdout, stderr, hung, source, out, out_dir, "json")
            found = judge_mir(code, stderr, source, found)
            return outcome(
                command,
                kind,
                index,
                code,
                seconds,
                found,
                data,
                ".mir",
                (*args, f"# from {name}"),
                stderr,
            )
        finally:
            shutil.rmtree(job, ignore_errors=True)


def _json_as_text(stderr: bytes) -> bytes:
    """`--diagnostics json` records as `FILE:LINE:COL: message` lines (a record without a
    line is written without one, and so is a finding)."""
    import orjson

    out = []
    for raw in stderr.splitlines():
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            out.append(raw.decode("utf-8", "replace"))
            continue
        where = f"{rec['file']}:{rec['line']}:{rec['col']}" if rec.get("line") else rec["file"]
        out.append(f"{where}: {rec['message']}")
    return ("\n".join(out) + "\n").encode()


_FUZZER: MirFuzzer | None = None


def _init(cfg: Config, seed: int, workdir: str) -> None:
    global _FUZZER
    _FUZZER = MirFuzzer(cfg, seed, Path(tempfile.mkdtemp(dir=workdir, prefix="w")))


def _job(job: tuple[str, int]) -> Outcome:
    assert _FUZZER is not None
    return _FUZZER.run(*job)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.mir", description=__doc__)
    ap.add_argument("--long", action="store_true", help="the long campaign: 1000 per command")
    ap.add_argument("--per-target", type=int, default=None, help="inputs per command (200)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--time-limit", type=float, default=1.0)
    ap.add_argument("--hang-seconds", type=float, default=30.0)
    ap.add_argument(
        "--save", default=os.path.join(tempfile.gettempdir(), "placement-fuzz-mir-findings")
    )
    ns = ap.parse_args(argv)
    per = ns.per_target if ns.per_target is not None else (1000 if ns.long else 200)
    cfg = Config(time_limit=ns.time_limit, hang_seconds=ns.hang_seconds)
    jobs = [(c, i) for i in range(per) for c in COMMANDS]
    workdir = tempfile.mkdtemp(prefix="placement-fuzz-mir-")
    start = time.monotonic()
    try:
        outcomes = run_jobs(ns.workers, _init, (cfg, ns.seed, workdir), _job, jobs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"# MIR fuzz campaign: {per} inputs per command, seed {ns.seed}, {ns.workers} workers, "
        f"{time.monotonic() - start:.0f} s\n"
    )
    print(table(outcomes, "kind") + "\n")
    print(table(outcomes, "command") + "\n")
    no_pos = sum(1 for o in outcomes if any(c == "no-position" for c, _ in o.findings))
    print(f"exit-3 messages without a position: {no_pos}\n")
    return print_findings(
        outcomes,
        Path(ns.save),
        "no findings: 0 internal errors, 0 hangs, every exit-3 message with a position",
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
