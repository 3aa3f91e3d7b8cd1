"""The vertex path premium per block and target (§1.8): vertex data does not flow
along edges, so a block pays, on every target outside a path's origin, the estimated
size of each path it reads."""

from __future__ import annotations

import math

from placement_cli.frontends.lower.matrices import UNPRICEABLE, estimate
from placement_cli.frontends.lower.profile import Compiled

# How to price an unbounded size, in the order that works for every input: MIR text has
# no place for a `size_cap`, so the option and the project file come first.
CAP_ADVICE = (
    "pass --size-cap N (or set size-cap = N in placement.toml; a body file may also set "
    "size_cap) to count an unbounded size as N units"
)


def block_paths(reads: set[int], names: tuple[str, ...]) -> list[int]:
    """The paths a block reads, a composite swallowing its children, in profile order.

    >>> block_paths({0, 1, 2}, ("a", "a.b", "c"))
    [0, 2]
    """
    keep = []
    for p in sorted(reads):
        if not any(q != p and names[p].startswith(names[q] + ".") for q in reads):
            keep.append(p)
    return keep


def premium(prof: Compiled, paths: list[int], cap: float | None) -> tuple[list[float], bool]:
    """Per target: the estimated size of every read path whose origin is elsewhere
    (summed as a range, times the target's multiplier, then estimated). An unbounded
    path counts as `cap` on its own (at least its lower bound), so reading one more path
    never lowers the premium. Returns (premium per target, unpriceable?).

    >>> from placement_cli.frontends.lower.profile import load_profile
    >>> p = load_profile("hashql")
    >>> props, types = p.path_names.index("properties"), p.path_names.index("metadata.entity_type_ids")
    >>> premium(p, [props], 64)[0][0], premium(p, [props, types], 64)[0][0]
    (32.0, 64.5)
    """
    out = []
    bad = False
    for t, r in enumerate(prof.rules):
        lo = hi = 0.0
        unbounded = False
        for p in paths:
            if not prof.path_origin[p] >> t & 1:
                plo, phi = prof.path_size[p]
                if phi == math.inf:
                    if cap is None:
                        unbounded = True
                    else:
                        phi = max(plo, cap)
                lo += plo
                hi += phi
        m = r.premium_multiplier
        if unbounded:
            hi = math.inf
        if hi == 0:
            out.append(0.0)
            continue
        est = estimate(lo * m, hi * m if hi != math.inf else hi, prof.profile.estimate, None)
        if est is None:
            bad = True
            out.append(UNPRICEABLE)
        else:
            out.append(min(est, UNPRICEABLE))
    return out, bad
