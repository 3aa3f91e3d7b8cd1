"""A reader for the HashQL compiler's pretty-printed MIR (`.mir` text) that produces a
body-file dict (docs/body-format.md, version 1). Standard library only.

Grammar (EBNF; `NL` is a newline, LF or CRLF; `// ...` comments run to the end of a line and are
ignored, blank lines may appear between any two lines):

    file     = { body } ;                                     (* at least one *)
    body     = [ "*" ] ( "fn" | "thunk" ) name "(" [ param { "," param } ] ")"
               [ "->" type ] "{" NL { "let" LOCAL ":" type NL } block { block } "}" ;
    param    = LOCAL ":" type ;
    name     = "{" text "}" | IDENT ;                         (* {closure#3}, f1:0 *)
    block    = BB "(" [ LOCAL { "," LOCAL } ] ")" ":" "{" NL { stmt NL } term NL "}" ;
    stmt     = LOCAL "=" rvalue | "let" LOCAL | "drop" LOCAL | "nop" ;
    rvalue   = "input" ( "LOAD" | "EXISTS" ) IDENT
             | "apply" operand { operand }                    (* to the end of the line *)
             | "closure" "(" operand "," operand ")"
             | "opaque" "(" IDENT "," operand ")"
             | "list" "(" [ operand { "," operand } ] ")"
             | "dict" "(" [ operand ":" operand { "," operand ":" operand } ] ")"
             | "(" [ operand { "," operand } ] ")"            (* tuple *)
             | "(" IDENT ":" operand { "," IDENT ":" operand } ")"   (* struct *)
             | ( "!" | "~" | "-" ) operand
             | operand [ BINOP operand ] ;
    operand  = place | [ "-" ] NUMBER | STRING | "true" | "false" | "null" | "()"
             | "(" name "as" "FnPtr" ")" ;
    place    = LOCAL { "." ( DIGITS | IDENT ) } ;             (* %1.metadata.archived *)
    term     = "return" operand | "unreachable" | "goto" "->" target
             | "switchInt" "(" operand ")" "->" "[" [ arm { "," arm } ] "]"
             | "graph" "read" "entities" "(" operand ")"
               { NL "|>" "filter" "(" name "," LOCAL ")" } NL "|>" "collect" "->" BB "(" "_" ")" ;
    arm      = ( DIGITS | "otherwise" ) ":" target ;
    target   = BB "(" [ operand { "," operand } ] ")" ;
    type     = atom { "|" atom } | atom { "&" atom } ;
    atom     = "?" | "!" | "..." | PRIMITIVE | "List" "<" type ">" | "Dict" "<" type "," type ">"
             | PATH [ "<" type { "," type } ">" ] [ "(" type ")" ]   (* nominal; repr adjacent *)
             | "(" ")" | "(" ":" ")" | "(" IDENT ":" type { "," IDENT ":" type } ")"
             | "(" type { "," type } [ "," ] ")" [ "->" atom ]
             | "<" type { "," type } ">" atom | "[" type "=" type { "," type "=" type } "]" atom ;

Mapping: `%0` of a `fn` body is `env`, `%1` of a graph-read filter is `vertex`, other
locals are `_N`; `opaque(T, x)` reads `x` (a newtype wrap), `input EXISTS n` is the
input `exists(n)`, `apply %c.0 %c.1 args` calls the closure `c` with `args`; types as in
`types.py`. Index projections (`%1[%2]`) have no body-format form and are an error.

    >>> parse_mir("thunk t() -> Integer {\\n    bb0(): {\\n        return 7\\n    }\\n}")["bodies"][0]["name"]
    't'
"""

from placement_cli.core.errors import InputError, Problem

from .convert import parse_mir
from .errors import MirSyntaxError
from .positions import MirBodyFile

_BOM = b"\xef\xbb\xbf"

__all__ = ["MirSyntaxError", "is_mir", "parse_mir", "read_body"]


def is_mir(path: str) -> bool:
    """Whether `path` names MIR text (by its extension; `-` never does).

    >>> is_mir("q.mir"), is_mir("q.body.yaml"), is_mir("-")
    (True, False, False)
    """
    return path.endswith(".mir")


def read_body(data: bytes, source: str) -> MirBodyFile:
    """The body-file dict of MIR text `data` (with its `source_map`); `InputError`
    (exit 3, `FILE:LINE:COL: message`) when it is not UTF-8 or not MIR this reader
    knows. A UTF-8 byte-order mark is skipped (positions count from after it).

    >>> read_body(b"\\xef\\xbb\\xbfthunk t() -> Integer {\\r\\n bb0(): {\\r\\n return 7\\r\\n }\\r\\n}", "t.mir")["version"]
    1
    >>> read_body(b"fn", "t.mir")
    Traceback (most recent call last):
    ...
    placement_cli.core.errors.InputError: t.mir:1:3: expected a body name, found end of input
    >>> read_body(b"fn f(\\n  %0: \\xff", "t.mir")
    Traceback (most recent call last):
    ...
    placement_cli.core.errors.InputError: t.mir:2:7: MIR text is not UTF-8 (byte 0xff)
    """
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8")
        line = good.count("\n") + 1
        col = len(good) - good.rfind("\n")  # characters, as the scanner counts them
        raise InputError(
            [Problem("", f"MIR text is not UTF-8 (byte 0x{data[exc.start]:02x})", line, col)],
            source,
        ) from None
    try:
        return parse_mir(text, source)
    except MirSyntaxError as exc:
        raise InputError([Problem("", exc.message, exc.line, exc.col)], source) from None
