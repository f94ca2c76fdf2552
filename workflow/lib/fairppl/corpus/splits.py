"""Train/dev/test splits that hold out the same aligned units in every language.

A unit's split depends only on its 0-based position in the corpus's own order (every KJV verse
for the Bible, every line for a line-aligned archive), counted before any unit is dropped, as
Mielke et al. (2019) count the lines of their files. Adding or removing a language, or a
placeholder in one, therefore never moves another unit between splits.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import InputError


@dataclass(frozen=True)
class SplitScheme:
    """Mielke et al.'s block scheme: in every block of ``block_size`` units, positions
    ``dev_start..dev_end`` (1-based, inclusive) go to dev, ``test_start..test_end`` to test, and
    the rest to train. The defaults are theirs: blocks of 30, lines 1-5 dev, 6-10 test.

    The config key ``split`` holds the same numbers (``block_size``, ``dev: [start, end]``,
    ``test: [start, end]``); an invalid scheme raises :class:`fairppl.core.errors.InputError` naming
    that key: a range outside ``1..block_size`` or backwards, dev and test overlapping, or dev
    and test together covering the whole block (no train units)."""

    block_size: int = 30
    dev_start: int = 1
    dev_end: int = 5
    test_start: int = 6
    test_end: int = 10

    def __post_init__(self):
        b = self.block_size
        given = (f"config key `split`: block_size={b}, dev=[{self.dev_start}, {self.dev_end}], "
                 f"test=[{self.test_start}, {self.test_end}]")
        for name, start, end in (("dev", self.dev_start, self.dev_end),
                                 ("test", self.test_start, self.test_end)):
            if not 1 <= start <= end <= b:
                raise InputError(f"invalid split scheme ({given}): expected split.{name} = "
                                 f"[start, end] with 1 <= start <= end <= block_size ({b})")
        if not (self.dev_end < self.test_start or self.test_end < self.dev_start):
            raise InputError(f"invalid split scheme ({given}): expected split.dev and "
                             f"split.test not to overlap")
        held_out = (self.dev_end - self.dev_start + 1) + (self.test_end - self.test_start + 1)
        if held_out >= b:
            raise InputError(f"invalid split scheme ({given}): dev and test cover all {b} "
                             f"positions of a block, leaving no train units; expected them to "
                             f"cover fewer than block_size positions")

    def split_of(self, position: int) -> str:
        """Split ('train', 'dev' or 'test') of the unit at 0-based ``position`` in the corpus's
        own order (before any unit is dropped)."""
        k = position % self.block_size + 1
        if self.dev_start <= k <= self.dev_end:
            return "dev"
        if self.test_start <= k <= self.test_end:
            return "test"
        return "train"

    def first_positions(self) -> dict[str, int]:
        """0-based position of the first unit of each split (every split has one, in block 0)."""
        first: dict[str, int] = {}
        for pos in range(self.block_size):
            first.setdefault(self.split_of(pos), pos)
        return first


def assign_splits(n_units: int, scheme: SplitScheme = SplitScheme()) -> list[str]:
    """Split label of each of ``n_units`` units at positions 0..n_units-1. Depends only on the
    position, so every language holds out the same units."""
    return [scheme.split_of(i) for i in range(n_units)]
