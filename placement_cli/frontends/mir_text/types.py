"""HashQL types, as the MIR printer renders them, turned into body-file types.

| printed | body type |
|---|---|
| `Boolean` `Integer` `Number` `String` `Null` | `bool` `int` `float` `string` `unit` |
| `?` (unknown), `!` (never), `...` (a recursion cut), `_N` (a hole), `T?N` / `?N` (a generic parameter), `A & B` | `unknown` |
| `()` / `(T,)` / `(A, B)` | `{tuple: [...]}` |
| `(:)` / `(a: A, b: B)` | `{struct: {...}}` |
| `List<T>`, `Dict<K, V>` | `{list: T}`, `{dict: [K, V]}` |
| `A \\| B` | `{union: [A, B]}` |
| `(A, B) -> R` | `closure` |
| a nominal name `::graph::types::knowledge::entity::EntityUuid` (with or without `<generics>`) | `{opaque: NAME}` |
| the same with its representation printed, `Name(repr)` | `{opaque: {name: NAME, of: repr}}` |
| `::core::option::Some<T>` (`newtype Some<T> = T`) | `{opaque: {name: ::core::option::Some, of: T}}` |
| `<T>base`, `[T = X] base` (generic binders and applications) | the base |

Never and intersections have no body-format counterpart: `unknown` is the conservative
reading (it accepts any projection and is never equality-safe).
"""

from __future__ import annotations

from typing import Any

from .lexer import Cursor, describe, tokenize

BodyType = Any  # a body-file type: a string or a one-key mapping

PRIMITIVES = {
    "Boolean": "bool",
    "Integer": "int",
    "Number": "float",
    "String": "string",
    "Null": "unit",
}
# `newtype Some<T> = T` (the compiler's core/option.rs): its argument is its representation
SOME = "::core::option::Some"
# Nested types recurse through two frames per level; this keeps far below Python's limit.
MAX_DEPTH = 200


def type_of(text: str, source: str = "<type>") -> BodyType:
    """The body type of one printed type (the whole text).

    >>> type_of("(uuid: ::core::uuid::Uuid, tags: List<String>)")
    {'struct': {'uuid': {'opaque': '::core::uuid::Uuid'}, 'tags': {'list': 'string'}}}
    >>> type_of("(Integer) -> (Boolean | Null)")
    'closure'
    """
    cur = Cursor(tokenize(text, source), source)
    t = parse_type(cur)
    cur.expect("EOF", what="the end of the type")
    return t


def parse_type(cur: Cursor, depth: int = 0) -> BodyType:
    """A type at the cursor: variants joined by `|` (a union) or by `&` (an
    intersection, read as unknown).

    >>> parse_type(Cursor(tokenize("List<Integer> | Null"), "t"))
    {'union': [{'list': 'int'}, 'unit']}
    """
    if depth > MAX_DEPTH:
        raise cur.error(f"types nested deeper than {MAX_DEPTH} levels")
    start = cur.peek()
    t = _atom(cur, depth)
    if cur.at("|") or cur.at("&"):
        op = cur.peek().kind
        variants = [t]
        while cur.at("|") or cur.at("&"):
            if cur.peek().kind != op:
                # The printer parenthesises a lattice inside a lattice, so a mix is malformed.
                raise cur.error("'|' and '&' mixed without parentheses")
            cur.next()
            variants.append(_atom(cur, depth))
        t = {"union": variants} if op == "|" else "unknown"
    if depth == 0 and t.__class__ is not str and _nesting(t) > MAX_DEPTH:
        # a level of MIR is up to two of the body file's (`{"dict": [K, V]}`), which the
        # tools that read and write the body file (JSON: 255 levels) must take
        raise cur.error(f"types nested deeper than {MAX_DEPTH} levels", start)
    return t


def _nesting(t: BodyType) -> int:
    """How deep a body type's document is (`'int'` 0, `{'list': 'int'}` 1).

    >>> _nesting({"dict": ["int", {"list": "int"}]})
    3
    """
    deepest, todo = 0, [(t, 0)]
    while todo:
        v, d = todo.pop()
        deepest = max(deepest, d)
        if isinstance(v, dict):
            todo.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            todo.extend((x, d + 1) for x in v)
    return deepest


def _atom(cur: Cursor, depth: int) -> BodyType:
    if depth > MAX_DEPTH:  # `<T><U>...base` and `() -> () -> ...` chain through here
        raise cur.error(f"types nested deeper than {MAX_DEPTH} levels")
    tok = cur.peek()
    k = tok.kind
    if k in ("?", "!", "..."):
        cur.next()
        return "unknown"
    if k == "IDENT":
        return _named(cur, depth)
    if k == "(":
        return _parens(cur, depth)
    if k == "<":
        _generic_args(cur, depth)  # `<T: Bound>base`: a generic binder; keep the base
        return _atom(cur, depth + 1)
    if k == "[":
        cur.next()  # `[T = X] base`: substitutions applied to a base; keep the base
        while not cur.at("]"):
            parse_type(cur, depth + 1)
            cur.expect("=", what="'=' in a type substitution")
            parse_type(cur, depth + 1)
            if not cur.at("]"):
                cur.expect(",", what="',' or ']'")
        cur.next()
        return _atom(cur, depth + 1)
    raise cur.error(f"expected a type, found {describe(tok)}")


def _named(cur: Cursor, depth: int) -> BodyType:
    tok = cur.next()
    name = tok.text
    if name in PRIMITIVES:
        return PRIMITIVES[name]
    if name in ("List", "Dict") and cur.at("<"):
        cur.next()
        elem = parse_type(cur, depth + 1)
        if name == "List":
            cur.expect(">", what="'>' closing List<...>")
            return {"list": elem}
        cur.expect(",", what="',' between the key and value types of Dict<K, V>")
        val = parse_type(cur, depth + 1)
        cur.expect(">", what="'>' closing Dict<...>")
        return {"dict": [elem, val]}
    if "?" in name or (name.startswith("_") and name[1:].isdigit()):
        return "unknown"  # a generic parameter (`T?19`, `?19`) or an inference hole (`_3`)
    end = tok.end
    args: list[BodyType] = []
    if cur.at("<") and cur.peek().start == end:
        # `Entity<T?19>`: the arguments do not change the name
        end = _generic_args(cur, depth, args)
    if cur.at("(") and cur.peek().start == end:
        # The representation, printed right after the name when opaque types are expanded.
        return {"opaque": {"name": name, "of": _parens(cur, depth)}}
    if name == SOME and len(args) == 1:
        return {"opaque": {"name": name, "of": args[0]}}  # `newtype Some<T> = T`
    return {"opaque": name}


def _generic_args(cur: Cursor, depth: int, into: list[BodyType] | None = None) -> int:
    """Skip `<A, B: Bound>` (collecting the argument types into `into`); returns the
    end offset of the `>`."""
    cur.expect("<")
    while not cur.at(">"):
        arg = parse_type(cur, depth + 1)
        if into is not None:
            into.append(arg)
        if cur.at(":"):
            cur.next()
            parse_type(cur, depth + 1)
        if not cur.at(">"):
            cur.expect(",", what="',' or '>' in generic arguments")
    return cur.next().end


def _parens(cur: Cursor, depth: int) -> BodyType:
    """`()`, `(:)`, `(T,)`, `(A, B)`, `(a: A)`, `(A) -> R`, or `(T)` (grouping)."""
    cur.expect("(")
    if cur.at(":") and cur.at(")", k=1):
        cur.next()
        cur.next()
        return {"struct": {}}
    if cur.at("IDENT") and cur.at(":", k=1):
        fields: dict[str, BodyType] = {}
        while True:
            ftok = cur.expect("IDENT", what="a field name")
            cur.expect(":")
            if ftok.text in fields:
                raise cur.error(f"duplicate field '{ftok.text}'", ftok)
            fields[ftok.text] = parse_type(cur, depth + 1)
            if cur.at(")"):
                break
            cur.expect(",", what="',' or ')' in a struct type")
            if cur.at(")"):
                break
        cur.next()
        return {"struct": fields}
    items: list[BodyType] = []
    trailing = False
    while not cur.at(")"):
        items.append(parse_type(cur, depth + 1))
        trailing = False
        if cur.at(")"):
            break
        cur.expect(",", what="',' or ')' in a type list")
        trailing = True
    cur.next()
    if cur.at("->"):
        cur.next()
        _atom(cur, depth + 1)  # the return type: a union one is printed in parentheses
        return "closure"
    if len(items) == 1 and not trailing:
        return items[0]  # grouping parentheses: `(A | B) | C`, or an opaque's representation
    return {"tuple": items}
