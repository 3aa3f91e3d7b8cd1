"""How many examples a property test runs, relative to the loaded hypothesis profile.

A test that needs more (or fewer) examples than the profile's default asks for
`examples(N)`: N under the default and CI profiles (200 examples), a tenth of N under
`fast` (`make test-fast`), never fewer than 5. An explicit `max_examples=N` would
override every profile and keep the inner loop slow.
"""

from __future__ import annotations

from hypothesis import settings

BASE = 200  # the default profile's max_examples


def examples(n: int) -> int:
    """N scaled to the loaded profile.

    >>> examples(200) == settings().max_examples
    True
    """
    return max(5, n * settings().max_examples // BASE)
