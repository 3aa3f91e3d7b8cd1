"""The rule behind each "cannot run there" of `placement explain`, in the program's terms.

`lower` records, per original block, the rule that excluded each statement, terminator
and block parameter from each target (`lower.excluded`, see
`frontends/lower/rules.py`), and each target's block-level rules
(`lower.target_rules`). Here an `unsupported-statement` or `unsupported-terminator`
reason of a lowered block gets that rule (`rule`, a registered code) and says it:
"postgres cannot run `%3 = apply %2.0 %2.1 12`: postgres runs no calls", following a
propagated exclusion (`excluded-operand`) through the locals it came from to the rule at
its root. A `pruned` reason gets `not-enterable` or `loop-banned` when the edge prune
named is where that rule holds. Statements are quoted in MIR terms when the body was
read from the compiler's MIR text (`lower.excluded[...].text`), else as the plan gives
them.
"""

from __future__ import annotations

from typing import Any

from placement_cli.core.rule_codes import RULE_WORDS

MAX_HOPS = 8  # a propagated exclusion is followed this far, then summarised


class Rules:
    """The `lower` section's rules of one plan, indexed for `explain`."""

    def __init__(self, lower: dict[str, Any], plan: Any) -> None:
        self.excluded: dict[str, Any] = lower.get("excluded") or {}
        self.target_rules: dict[str, list[str]] = lower.get("target_rules") or {}
        self.edges = {
            (e.get("from"), e.get("index")): e
            for e in lower.get("edges") or ()
            if isinstance(e, dict)
        }
        self.prov: dict[str, Any] = getattr(plan, "provenance", None) or {}
        # (original block, statement index) -> the plan's text of the statement
        self.plan_text: dict[tuple[str, int], str] = {}
        for blk in plan.blocks:
            origin = self.prov.get(blk.id)
            if not isinstance(origin, dict):
                continue
            start = (origin.get("statements") or [0])[0]
            for j, st in enumerate(blk.statements):
                if st.text is not None:
                    self.plan_text[str(origin.get("block")), start + j] = st.text

    def text(self, block: str, j: int) -> str:
        got = ((self.excluded.get(block) or {}).get("text") or {}).get(str(j))
        return got if got is not None else self.plan_text.get((block, j), f"{block}[{j}]")

    def origin(self, piece: str) -> tuple[str, int] | None:
        o = self.prov.get(piece)
        if not isinstance(o, dict) or o.get("block") is None:
            return None
        return o["block"], (o.get("statements") or [0])[0]

    def statement(self, piece: str, j: int, target: str) -> dict[str, Any] | None:
        """The rule and the sentence for statement `j` of plan block `piece` on `target`."""
        o = self.origin(piece)
        if o is None:
            return None
        block, start = o
        rec = (
            ((self.excluded.get(block) or {}).get("statements") or {}).get(str(start + j)) or {}
        ).get(target)
        if not isinstance(rec, dict):
            return None
        quoted = self.text(block, start + j)
        return {
            "rule": rec.get("code"),
            "text": quoted,
            "message": f"{target} cannot run `{quoted}`: {self.why(rec, target)}",
        }

    def terminator(self, piece: str, kind: str, target: str) -> dict[str, Any] | None:
        o = self.origin(piece)
        if o is None:
            return None
        rec = ((self.excluded.get(o[0]) or {}).get("terminator") or {}).get(target)
        if not isinstance(rec, dict):
            return None
        return {
            "rule": rec.get("code"),
            "message": f"{target} cannot run the `{kind}` terminator of {o[0]}: {self.why(rec, target)}",
        }

    def why(self, rec: dict[str, Any], target: str) -> str:
        """The rule's wording, following `excluded-operand` to its root."""
        parts = []
        seen: set[str] = set()
        for _ in range(MAX_HOPS):
            rule = str(rec.get("code"))
            via = rec.get("via")
            words = RULE_WORDS.get(rule, rule).format(t=target, via=via, kind=rec.get("kind"))
            if rec.get("edge") is not None:
                words = f"on the edge from {rec['edge']}, {words}"
            parts.append(words)
            at = rec.get("at")
            if rule != "excluded-operand" or not isinstance(at, list) or not at or via in seen:
                return ": ".join(parts)
            seen.add(str(via))
            block = str(at[0])
            ex = self.excluded.get(block) or {}
            if len(at) > 1:
                nxt = ((ex.get("statements") or {}).get(str(at[1])) or {}).get(target)
                where = f"`{self.text(block, int(at[1]))}` ({block}, statement {at[1]})"
            else:
                nxt = ((ex.get("params") or {}).get(str(via)) or {}).get(target)
                where = f"`{via}` is a parameter of {block}"
            parts.append(where)
            if not isinstance(nxt, dict):
                return ": ".join(parts)
            rec = nxt
        return ": ".join(parts) + ": ..."

    def pruned(self, edge: dict[str, Any], block: str, target: str) -> dict[str, str] | None:
        """The rule (`code`) and its sentence when prune's edge is where a block-level
        rule of `target` holds."""
        rules = self.target_rules.get(target) or []
        e = self.edges.get((edge.get("from"), edge.get("index")))
        if "loop-banned" in rules and isinstance(e, dict) and e.get("in_loop"):
            return {
                "code": "loop-banned",
                "message": f"the edge {edge.get('from')}[{edge.get('index')}] -> {edge.get('to')} is inside "
                f"a loop, and {RULE_WORDS['loop-banned'].format(t=target)}",
            }
        if "not-enterable" in rules and edge.get("to") == block and edge.get("from") != block:
            return {
                "code": "not-enterable",
                "message": f"{RULE_WORDS['not-enterable'].format(t=target)}, and {edge.get('from')} "
                f"(its predecessor on edge {edge.get('from')}[{edge.get('index')}]) cannot run on {target}",
            }
        return None


def name_rules(
    rules: Rules | None, piece: str, kind: str, target: str, reasons: list[dict[str, Any]]
) -> None:
    """Give each reason of block `piece` (terminator `kind`) on `target` the rule behind
    it (in place)."""
    if rules is None:
        return
    for r in reasons:
        code = r.get("code")
        got: dict[str, Any] | None = None
        if code == "unsupported-statement" and isinstance(r.get("statement"), int):
            got = rules.statement(piece, r["statement"], target)
        elif code == "unsupported-terminator":
            got = rules.terminator(piece, kind, target)
        elif code == "pruned" and isinstance(r.get("edge"), dict):
            hit = rules.pruned(r["edge"], piece, target)
            if hit is not None:
                r["rule"] = hit["code"]
                r["message"] += f": {hit['message']}"
            continue
        if got is not None:
            r["rule"] = got["rule"]
            r["message"] = got["message"]
            if "text" in got:
                r["text"] = got["text"]


def rules_of(lower: Any, plan: Any) -> Rules | None:
    """The rules of a plan `lower` wrote (None: not lowered, or lowered before rules)."""
    if not isinstance(lower, dict) or "excluded" not in lower:
        return None
    return Rules(lower, plan)
