"""The rules of `lower`'s eligibility analysis, as codes: what `placement codes RULE`
says of each (`RULE_CODES`, part of the registry in `codes.py`) and how `placement
explain` says it (`RULE_WORDS`). `lower` records a rule per excluded statement and
target in the plan's `lower.excluded` (`frontends/lower/rules.py`)."""

from __future__ import annotations

from placement_cli.core.code_record import Code

RULE_CODES: tuple[Code, ...] = (
    Code(
        "no-calls",
        ("reason",),
        ("lower", "explain"),
        "the target runs no calls",
        "A rule of `lower`'s eligibility analysis (recorded in the plan's `lower.excluded`, quoted by `placement explain`): the statement is an `apply`, and the target's profile has `calls: false` (or no cost for `apply`). The built-in postgres and embedding targets run no calls; the interpreter runs them. Move the call out of the part meant for that target, or accept the interpreter.",
    ),
    Code(
        "no-closures",
        ("reason",),
        ("lower", "explain"),
        "the target builds no closures",
        "A rule of `lower`'s eligibility analysis: the statement builds a closure aggregate and the target's profile has `closures: false`. Only the interpreter builds closures in the built-in profile.",
    ),
    Code(
        "no-constants",
        ("reason",),
        ("lower", "explain"),
        "the target reads no constants",
        "A rule of `lower`'s eligibility analysis: the statement (or terminator, or an edge's argument) has a constant operand, and the target's profile has `constants: none`. The built-in embedding target reads only vertex paths, never constants.",
    ),
    Code(
        "no-function-pointers",
        ("reason",),
        ("lower", "explain"),
        "the target reads primitive constants only, no function pointers",
        "A rule of `lower`'s eligibility analysis: an operand is a function pointer (`fn NAME`, MIR `(NAME as FnPtr)`), and the target's profile has `constants: primitive`. The built-in postgres target reads integers, booleans, strings and unit, not function pointers.",
    ),
    Code(
        "equality-unsafe",
        ("reason",),
        ("lower", "explain"),
        "`==`/`!=` on operand types whose jsonb forms can collide",
        "A rule of `lower`'s eligibility analysis: the target has `equality_safety: true` (the built-in postgres compares jsonb), and the two operand types of `==` or `!=` can have equal jsonb forms while being different values: a dict and a struct, a list and a tuple, an opaque type and anything else (or another opaque type), or a type that is unknown. Give the operands the same type, or compare their fields.",
    ),
    Code(
        "serialization-unsafe",
        ("reason",),
        ("lower", "explain"),
        "the value's type does not serialize safely",
        "A rule of `lower`'s eligibility analysis: the target has `serialization_safety: true` (the built-in postgres), and the local the statement defines (or a block parameter) has a type whose serialized form is ambiguous: a union with an opaque variant, or a union of a struct and a dict, or of a tuple and a list.",
    ),
    Code(
        "unrepresentable-env-field",
        ("reason",),
        ("lower", "explain"),
        "an environment field holds a closure or a dict with non-string keys",
        "A rule of `lower`'s eligibility analysis: the operand reads a field of the captured environment (`env.N`, MIR `%0.N`) whose type contains a closure or a dict with non-string keys, which the target cannot represent. The built-in postgres target reads the other fields.",
    ),
    Code(
        "no-env-fields",
        ("reason",),
        ("lower", "explain"),
        "the target reads no environment field",
        "A rule of `lower`'s eligibility analysis: the operand reads the captured environment (`env.N`), and the target's profile has `env_fields: false`. The built-in embedding target reads only the vertex's embedding store.",
    ),
    Code(
        "whole-argument",
        ("reason",),
        ("lower", "explain"),
        "the target reads an argument only through a field or a path",
        "A rule of `lower`'s eligibility analysis: the operand is a whole argument (the environment or the vertex itself, not one of its fields or paths), and the target's profile has `arguments: native`. The built-in postgres and embedding targets read `env.N` and `vertex.PATH`, not `env` or `vertex`.",
    ),
    Code(
        "unreadable-argument",
        ("reason",),
        ("lower", "explain"),
        "the target reads no argument",
        "A rule of `lower`'s eligibility analysis: the operand reads an argument of the body, and the target's profile has `arguments: none`.",
    ),
    Code(
        "unresolvable-path",
        ("reason",),
        ("lower", "explain"),
        "the vertex access resolves to no single path",
        "A rule of `lower`'s eligibility analysis: the operand reads the vertex through a path the profile cannot resolve to one storage location (the whole vertex, a composite such as `metadata`, a sub-path below a non-JSONB path, or an unknown path on an open profile). As in the compiler, such an access reads every path: postgres and embedding reject it, the interpreter runs it. Read the field you need by its full path.",
    ),
    Code(
        "path-not-stored",
        ("reason",),
        ("lower", "explain"),
        "the target does not store the vertex path",
        "A rule of `lower`'s eligibility analysis: the operand reads a vertex path whose `origin` (the profile's path table) does not include the target: the built-in postgres stores the entity columns and properties, the embedding store only `encodings.vectors`.",
    ),
    Code(
        "unsupported-kind",
        ("reason",),
        ("lower", "explain"),
        "the target runs no statement or terminator of this kind",
        "A rule of `lower`'s eligibility analysis: the target's profile gives no cost for the statement's kind (load, unary, binary, aggregate, apply, input) or the terminator's kind. The built-in embedding target runs only loads; postgres runs every statement kind but `apply` (see `no-calls`).",
    ),
    Code(
        "effectful",
        ("reason",),
        ("lower", "explain"),
        "a graph read is an effect the target does not run",
        "A rule of `lower`'s eligibility analysis: the terminator is a `graph_read` (an effect), and the target's profile has `effects: false`; a block parameter a graph read fills cannot be computed on such a target either (recorded with the edge). Only the built-in interpreter runs graph reads.",
    ),
    Code(
        "excluded-operand",
        ("reason",),
        ("lower", "explain"),
        "the statement reads a local the target cannot compute",
        "A rule of `lower`'s eligibility analysis, propagated: an operand is a local that is not dispatchable on the target, because its own definition is excluded there (or, for a block parameter, an incoming argument is). `lower.excluded` records the local (`via`) and where it is defined (`at`); `placement explain` follows it to the rule at its root.",
    ),
    Code(
        "no-return",
        ("reason",),
        ("lower", "explain"),
        "the body has no return block, so nothing is dispatchable",
        "A rule of `lower`'s eligibility analysis: the dispatchable set is the intersection over every `return` block's exit state, and the body has none, so no local is dispatchable on a target that needs the analysis. Every statement that reads a local is excluded there.",
    ),
    Code(
        "loop-banned",
        ("reason",),
        ("lower", "explain"),
        "the target runs no loops",
        "A block-level rule (the profile's `loops: false`, in `lower.target_rules`): on an edge inside a loop (a strongly connected component of several blocks, or a self-loop) the transition matrix allows no entry touching the target, so prune removes it from the blocks at both ends. The built-in postgres target runs no loops. `placement explain` names the loop.",
    ),
    Code(
        "not-enterable",
        ("reason",),
        ("lower", "explain"),
        "the target cannot be entered from another target",
        "A block-level rule (the profile's `enterable: false`, in `lower.target_rules`): every transition into the target from another target is removed, so a block can run there only if some predecessor can too (the built-in postgres runs a prefix of the program, left but never entered). Prune removes the target from a block whose every predecessor is ruled out there.",
    ),
)

# How `placement explain` says each rule of `lower`'s eligibility analysis ({t}: the
# target; {via}: the local an `excluded-operand` comes through; {kind}: the statement's
# or terminator's kind).
RULE_WORDS: dict[str, str] = {
    "no-calls": "{t} runs no calls",
    "no-closures": "{t} builds no closures",
    "no-constants": "{t} reads no constants",
    "no-function-pointers": "{t} reads primitive constants only, no function pointers",
    "equality-unsafe": "{t} compares only values whose jsonb forms cannot collide, and these operand types can (dict vs struct, list vs tuple, different opaque types, or an unknown type)",
    "serialization-unsafe": "the value's type does not serialize safely to {t} (a union with an opaque variant, or mixing struct and dict, tuple and list)",
    "unrepresentable-env-field": "{t} reads an environment field only when it holds no closure and no dict with non-string keys",
    "no-env-fields": "{t} reads no field of the environment",
    "whole-argument": "{t} reads the arguments only through a field or a vertex path, never whole",
    "unreadable-argument": "{t} reads no argument",
    "unresolvable-path": "the vertex access resolves to no single stored path (it reads every path), which {t} cannot serve",
    "path-not-stored": "{t} does not store this vertex path",
    "unsupported-kind": "{t} runs no `{kind}`",
    "effectful": "a graph read is an effect, and {t} runs no effects",
    "excluded-operand": "it reads `{via}`, which {t} cannot compute",
    "no-return": "the body has no `return` block, so no local is dispatchable on {t}",
    "loop-banned": "{t} runs no loops",
    "not-enterable": "{t} cannot be entered from another target",
}
