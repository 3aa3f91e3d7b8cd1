"""Compiling a body file into the checked, indexed form of `ir`.

`compile_file` checks every semantic rule of the body format (each local defined
before every use, on every path: by dominance when the body is SSA, by a must-analysis
when a local is assigned more than once; known locals and blocks; projections that fit
the type; argument counts) and raises one `InputError` listing every problem.
"""

from __future__ import annotations

from placement_cli.core.errors import InputError, Problem
from placement_cli.formats.body_structs import Body, BodyFile, is_const, is_fn
from placement_cli.frontends.lower.flow import body_flow, dom_intervals, reverse_postorder
from placement_cli.frontends.lower.ir import (
    K_ARG,
    K_CONST,
    K_ENV,
    K_FN,
    K_LOCAL,
    K_VERTEX,
    Blk,
    BodyIR,
    FileIR,
    Op,
    Stmt,
    op_text,
    render,
)
from placement_cli.frontends.lower.profile import Compiled, nearest_path
from placement_cli.frontends.lower.types import UNKNOWN, Ty, Types
from placement_cli.ir import cfg

SUCC = {
    "goto": (1, 1),
    "graph_read": (1, 1),
    "switch": (1, None),
    "return": (0, 0),
    "unreachable": (0, 0),
}


class _Compiler:
    def __init__(self, f: BodyFile, prof: Compiled, prefix: str) -> None:
        self.f = f
        self.prof = prof
        self.prefix = prefix
        self.raw_problems: list[tuple[str, str]] = []
        self.types = Types(
            f.types, self.raw_problems, f"{prefix}types", nominal=prof.profile.nominal
        )
        self.path_types = [
            self.types.parse(prof.profile.paths[p].type, f"profile.paths.{p}.type")
            for p in prof.path_names
        ]
        self.path_index = {p: i for i, p in enumerate(prof.path_names)}
        # composites the table reaches through (`metadata`, `link_data.left_entity_id`),
        # and the whole vertex: valid accesses without storage of their own
        self.path_prefixes = {""}
        for p in prof.path_names:
            parts = p.split(".")
            self.path_prefixes.update(".".join(parts[:k]) for k in range(1, len(parts)))
        self.warnings: list[tuple[str, str, str]] = []  # (code, block id, message)
        ov = prof.profile.open_vertex
        # a profile that declares no paths says nothing about the vertex: open
        self.open_vertex = (not prof.path_names) if ov is None else ov
        self.body_args = {b.name: len(self._args_of(b)) for b in f.bodies}

    @staticmethod
    def _args_of(b: Body) -> list[str]:
        if b.args is not None:
            return list(b.args)
        return [x for x in (b.env, b.vertex) if x is not None]

    def add(self, path: str, msg: str) -> None:
        self.raw_problems.append((path, msg))

    def vertex_path(self, li: int, proj: list[str], raw: str, path: str, block: str) -> Op:
        """A vertex access resolved as the compiler resolves entity paths: a declared path;
        a sub-path below a JSONB path is that path; a composite the table reaches through,
        the whole vertex, or a sub-path of a non-JSONB path that fits its type is
        unresolvable (it reads every path). Anything else is an unknown path: an error, or
        a warning when the profile declares the vertex open (it then reads every path)."""
        pi = self.path_index.get(".".join(proj))
        if pi is not None:
            return Op(K_VERTEX, li, self.path_types[pi], pi, raw)
        for k in range(len(proj) - 1, 0, -1):
            pi = self.path_index.get(".".join(proj[:k]))
            if pi is None:
                continue
            ty: Ty = self.path_types[pi]
            fits = True
            for fld in proj[k:]:
                r = self.types.project(ty, fld)
                if isinstance(r, str):
                    fits = False
                    break
                ty = r
            if self.prof.path_jsonb[pi]:
                return Op(K_VERTEX, li, ty if fits else UNKNOWN, pi, raw)
            if fits:
                return Op(K_VERTEX, li, ty, -1, raw)
            break
        else:
            if ".".join(proj) in self.path_prefixes:
                return Op(K_VERTEX, li, UNKNOWN, -1, raw)
        rel = ".".join(proj)
        near = nearest_path(rel, [*self.prof.path_names, *sorted(self.path_prefixes - {""})])
        hint = f"did you mean `{near}`?" if near else "no declared path is close"
        msg = f"unknown vertex path `{rel}` in '{raw}' ({hint})"
        if self.open_vertex:
            self.warnings.append(
                (
                    "unknown-vertex-path",
                    block,
                    f"{path}: {msg}; it is unresolvable, as in the compiler: it reads every "
                    "path, so only a target that can read the whole vertex runs it",
                )
            )
        else:
            self.add(path, msg)
        return Op(K_VERTEX, li, UNKNOWN, -1, raw)

    def body(self, bi: int, b: Body) -> BodyIR:
        bp = f"{self.prefix}bodies[{bi}]"
        names = list(b.locals)
        lindex = {n: i for i, n in enumerate(names)}
        tys = [self.types.parse_cached(t, f"{bp}.locals.{n}") for n, t in b.locals.items()]
        args = []
        for j, a in enumerate(self._args_of(b)):
            if a not in lindex:
                self.add(
                    f"{bp}.args[{j}]" if b.args is not None else bp,
                    f"unknown local '{a}' (declare it under locals)",
                )
            else:
                args.append(lindex[a])
        env = lindex.get(b.env, -1) if b.env is not None else -1
        vertex = lindex.get(b.vertex, -1) if b.vertex is not None else -1
        for role, nm in (("env", b.env), ("vertex", b.vertex)):
            if nm is not None and b.args is not None and nm not in b.args:
                self.add(f"{bp}.{role}", f"'{nm}' is not one of the body's args")
        bindex: dict[str, int] = {}
        for i, blk in enumerate(b.blocks):
            if blk.id in bindex:
                self.add(f"{bp}.blocks[{i}].id", f"duplicate block id '{blk.id}'")
            else:
                bindex[blk.id] = i
        entry = 0
        if b.entry is not None:
            if b.entry in bindex:
                entry = bindex[b.entry]
            else:
                self.add(f"{bp}.entry", f"unknown block '{b.entry}'")
        # def sites: (block, position); args at the entry before everything (-2), params at -1
        defsite: dict[int, tuple[int, int]] = {}  # the first definition of each local
        multi: set[int] = set()  # locals defined more than once (the body is then not SSA)
        more: list[tuple[int, int, int]] = []  # (local, block, pos) of the later definitions
        uses: list[tuple[int, int, int, str]] = []  # local, block, pos, path

        def define(local: int, blk: int, pos: int, path: str) -> None:
            if local in defsite:
                multi.add(local)
                more.append((local, blk, pos))
            else:
                defsite[local] = (blk, pos)

        for ai in args:
            define(ai, entry, -2, f"{bp}.args")

        def local_of(name: str, path: str) -> int:
            li = lindex.get(name)
            if li is None:
                self.add(path, f"unknown local '{name}'")
                return -1
            return li

        cache: dict[object, Op] = {}

        def operand(raw: object, path: str, blk: int, pos: int) -> Op:
            got = cache.get(raw) if isinstance(raw, str) else None
            if got is not None:
                uses.append((got.local, blk, pos, path))
                return got
            before = len(self.raw_problems)
            op = operand1(raw, path, blk, pos)
            if isinstance(raw, str) and len(self.raw_problems) == before:
                cache[raw] = op
            return op

        def operand1(raw: object, path: str, blk: int, pos: int) -> Op:
            if is_const(raw):
                return Op(K_CONST, -1, None, 0, op_text(raw))
            if is_fn(raw):
                return Op(K_FN, -1, None, 0, op_text(raw))
            assert isinstance(raw, str)
            head, *proj = raw.split(".")
            li = local_of(head, path)
            if li < 0:
                return Op(K_LOCAL, -1, UNKNOWN, 0, raw)
            uses.append((li, blk, pos, path))
            if li == vertex:
                return self.vertex_path(li, proj, raw, path, b.blocks[blk].id)
            ty = tys[li]
            field_ty = ty
            for k, fld in enumerate(proj):
                r = self.types.project(ty, fld)
                if isinstance(r, str):
                    self.add(path, f"projection '{raw}' does not fit the type of '{head}': {r}")
                    return Op(K_LOCAL, li, UNKNOWN, 0, raw)
                ty = r
                if k == 0:
                    field_ty = r
            if li == env and proj:
                # the environment is read per field: field N decides, not the projected part
                return Op(K_ENV, li, ty, int(self.types.env_field_ok(field_ty)), raw)
            return Op(K_ARG if li in args else K_LOCAL, li, ty, 0, raw)

        blocks: list[Blk] = []
        for i, blk in enumerate(b.blocks):
            kp = f"{bp}.blocks[{i}]"
            params = []
            for j, prm in enumerate(blk.params):
                li = local_of(prm, f"{kp}.params[{j}]")
                if li >= 0:
                    define(li, i, -1, f"{kp}.params[{j}]")
                    params.append(li)
            stmts = []
            for j, st in enumerate(blk.statements):
                sp = f"{kp}.statements[{j}]"
                k = st.rvalue_kind
                text = render(st, k)
                if st.assign is None:
                    nm = st.storage_live or st.storage_dead
                    if nm is not None:
                        local_of(
                            nm, f"{sp}.{'storage_live' if st.storage_live else 'storage_dead'}"
                        )
                    stmts.append(Stmt(k, -1, (), text))
                    continue
                lhs = local_of(st.assign, f"{sp}.assign")
                s = Stmt(k, lhs, (), text)
                if k == "load":
                    s.ops = (operand(st.load, f"{sp}.load", i, j),)
                elif k == "unary" and st.unary is not None:
                    s.ops = (operand(st.unary.operand, f"{sp}.unary.operand", i, j),)
                elif k == "binary" and st.binary is not None:
                    s.ops = (
                        operand(st.binary.left, f"{sp}.binary.left", i, j),
                        operand(st.binary.right, f"{sp}.binary.right", i, j),
                    )
                    if st.binary.op in ("==", "!="):
                        left, right = s.ops
                        s.eq_unsafe = not (
                            left.ty is None
                            or right.ty is None
                            or self.types.eq_safe(left.ty, right.ty)
                        )
                elif k == "aggregate" and st.aggregate is not None:
                    ag = st.aggregate
                    s.ops = tuple(
                        operand(o, f"{sp}.aggregate.operands[{m}]", i, j)
                        for m, o in enumerate(ag.operands)
                    )
                    s.closure = ag.kind == "closure"
                    s.agg = ag.kind
                    if ag.kind == "struct" and (
                        ag.fields is None or len(ag.fields) != len(ag.operands)
                    ):
                        self.add(
                            f"{sp}.aggregate.fields",
                            "a struct aggregate names one field per operand",
                        )
                    if ag.kind == "dict" and len(ag.operands) % 2:
                        self.add(
                            f"{sp}.aggregate.operands", "a dict aggregate takes key, value pairs"
                        )
                elif k == "apply" and st.apply is not None:
                    ap = st.apply
                    s.ops = (operand(ap.func, f"{sp}.apply.func", i, j),) + tuple(
                        operand(o, f"{sp}.apply.args[{m}]", i, j) for m, o in enumerate(ap.args)
                    )
                    callee = ap.func.fn if is_fn(ap.func) else None
                    if isinstance(callee, str) and callee not in self.body_args:
                        self.add(
                            f"{sp}.apply.func",
                            f"unknown body '{callee}' (the file's bodies: {', '.join(self.body_args)})",
                        )
                    elif isinstance(callee, str):
                        s.callee = callee
                        want = self.body_args[callee]
                        if want != len(ap.args):
                            self.add(
                                f"{sp}.apply.args",
                                f"body '{callee}' takes {want} argument(s), got {len(ap.args)}",
                            )
                if lhs >= 0:
                    define(lhs, i, j, f"{sp}.assign")
                stmts.append(s)
            t = blk.terminator
            tp = f"{kp}.terminator"
            pos = len(blk.statements)
            lo, hi = SUCC[t.kind]
            n_succ = len(t.successors)
            if n_succ < lo or (hi is not None and n_succ > hi):
                need = f"exactly {lo}" if lo == hi else f"at least {lo}"
                self.add(
                    f"{tp}.successors",
                    f"a '{t.kind}' terminator has {need} successor(s), got {n_succ}",
                )
            top = operand(t.operand, f"{tp}.operand", i, pos) if t.operand is not None else None
            if t.operand is not None and t.kind not in ("switch", "return"):
                self.add(f"{tp}.operand", f"a '{t.kind}' terminator takes no operand")
            if t.operand is None and t.kind == "switch":
                self.add(tp, "a 'switch' terminator needs an operand (its discriminant)")
            succ = []
            for m, e in enumerate(t.successors):
                ep = f"{tp}.successors[{m}]"
                dst = bindex.get(e.block)
                if dst is None:
                    self.add(f"{ep}.block", f"unknown block '{e.block}'")
                    dst = -1
                else:
                    want_n = 0 if t.kind == "graph_read" else len(b.blocks[dst].params)
                    if len(e.args) != want_n:
                        why = (
                            " (a graph_read fills the block's params itself)"
                            if t.kind == "graph_read"
                            else ""
                        )
                        self.add(
                            f"{ep}.args",
                            f"block '{e.block}' takes {want_n} argument(s), got {len(e.args)}{why}",
                        )
                succ.append(
                    (
                        dst,
                        tuple(operand(a, f"{ep}.args[{q}]", i, pos) for q, a in enumerate(e.args)),
                    )
                )
            blocks.append(Blk(blk.id, params, stmts, t.kind, top, succ, t.text or t.kind))
        ir = BodyIR(b.name, names, tys, args, env, vertex, entry, blocks, bindex)
        if multi:
            self._check_defined(blocks, entry, defsite, more, uses, names)
        else:
            self._check_dominance(ir, defsite, uses)
        ir.multi = frozenset(multi)
        ir.ser_safe = [self.types.ser_safe_cached(t) for t in tys]
        return ir

    def _check_dominance(
        self,
        body: BodyIR,
        defsite: dict[int, tuple[int, int]],
        uses: list[tuple[int, int, int, str]],
    ) -> None:
        blocks, entry, names = body.blocks, body.entry, body.locals
        if any(d < 0 for blk in blocks for d, _ in blk.succ):
            return  # unknown blocks already reported; dominance is meaningless
        f = body_flow(body)
        preds = [[u for u, _, _ in inc] for inc in f.incoming]
        rpo_num = f.rpo_num
        idom = cfg.dominators(entry, f.order, preds, len(blocks))
        pre, post = dom_intervals(idom, rpo_num, entry)
        for li, ub, upos, path in uses:
            site = defsite.get(li)
            if site is None:
                self.add(path, f"local '{names[li]}' is used but never defined")
                continue
            db, dpos = site
            if rpo_num[ub] < 0:
                continue  # an unreachable use: no path can observe it
            if db == ub:
                if dpos < upos:
                    continue
            elif rpo_num[db] >= 0 and pre[db] <= pre[ub] and post[ub] <= post[db]:
                continue  # db strictly dominates ub
            self.add(path, f"local '{names[li]}' is used before it is defined on every path")

    def _check_defined(
        self,
        blocks: list[Blk],
        entry: int,
        defsite: dict[int, tuple[int, int]],
        more: list[tuple[int, int, int]],
        uses: list[tuple[int, int, int, str]],
        names: list[str],
    ) -> None:
        """A body that is not SSA: every use must be reached by a definition on every
        path (a forward must-analysis over the defined locals; merges intersect)."""
        if any(d < 0 for blk in blocks for d, _ in blk.succ):
            return  # unknown blocks already reported
        n = len(blocks)
        order = reverse_postorder(blocks, entry)
        sites = [(li, db, dp) for li, (db, dp) in defsite.items()] + more
        gen = [0] * n  # defined somewhere in the block (params included)
        first_def: dict[tuple[int, int], int] = {}  # (block, local) -> earliest position
        for li, db, dp in sites:
            gen[db] |= 1 << li
            key = (db, li)
            if dp < first_def.get(key, 1 << 60):
                first_def[key] = dp
        args = 0
        for li, (_, dp) in defsite.items():
            if dp == -2:
                args |= 1 << li
        full = (1 << len(names)) - 1
        state_in = [full] * n
        state_in[entry] = args
        reach = [False] * n
        for b in order:
            reach[b] = True
        changed = True
        while changed:
            changed = False
            for u in order:
                out = state_in[u] | gen[u]
                for v, _ in blocks[u].succ:
                    new = state_in[v] & out
                    if new != state_in[v]:
                        state_in[v] = new
                        changed = True
        for li, ub, upos, path in uses:
            if li not in defsite:
                self.add(path, f"local '{names[li]}' is used but never defined")
                continue
            if not reach[ub] or state_in[ub] >> li & 1:
                continue
            if first_def.get((ub, li), upos) < upos:
                continue  # defined earlier in the block
            self.add(path, f"local '{names[li]}' is used before it is defined on every path")


def compile_file(f: BodyFile, prof: Compiled, body: str | None = None, prefix: str = "") -> FileIR:
    """Check and index every body of a body file."""
    c = _Compiler(f, prof, prefix)
    seen: dict[str, int] = {}
    for i, b in enumerate(f.bodies):
        if b.name in seen:
            c.add(f"{prefix}bodies[{i}].name", f"duplicate body name '{b.name}'")
        seen.setdefault(b.name, i)
    bodies = [c.body(i, b) for i, b in enumerate(f.bodies)]
    want = body if body is not None else f.place
    place = 0
    if want is not None:
        if want in seen:
            place = seen[want]
        else:
            c.add(f"{prefix}place" if body is None else "", f"unknown body '{want}'")
    if c.raw_problems:
        raise InputError([Problem(p, m) for p, m in c.raw_problems])
    for name, where in c.types.unknown_names.items():
        near = c.types.suggest(name)
        hint = f"did you mean `{near}`?" if near else "no known type name is close"
        c.warnings.append(
            (
                "unknown-type",
                "",
                f"{where}: unknown type name `{name}` ({hint}); it is read as an opaque type "
                "of that name, which is equal to nothing else",
            )
        )
    return FileIR(f.name, bodies, place, c.types, c.path_types, c.warnings)
