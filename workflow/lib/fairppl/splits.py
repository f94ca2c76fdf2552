"""Train/dev/test splits that hold out the same aligned units in every language."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError


@dataclass(frozen=True)
class SplitScheme:
    """Mielke et al.'s block scheme: in every block of ``block_size`` aligned units, positions
    ``dev_start..dev_end`` (1-based, inclusive) go to dev, ``test_start..test_end`` to test, and
    the rest to train. The defaults are theirs: blocks of 30, lines 1-5 dev, 6-10 test."""

    block_size: int = 30
    dev_start: int = 1
    dev_end: int = 5
    test_start: int = 6
    test_end: int = 10

    def __post_init__(self):
        b = self.block_size
        ok = (1 <= self.dev_start <= self.dev_end <= b and 1 <= self.test_start <= self.test_end <= b)
        overlap = not (self.dev_end < self.test_start or self.test_end < self.dev_start)
        if not ok or overlap:
            raise InputError(
                f"invalid split scheme {self}: expected 1 <= start <= end <= block_size for dev "
                f"and test, and non-overlapping dev and test ranges"
            )

    def split_of(self, position: int) -> str:
        """Split ('train', 'dev' or 'test') of the unit at 0-based aligned ``position``."""
        k = position % self.block_size + 1
        if self.dev_start <= k <= self.dev_end:
            return "dev"
        if self.test_start <= k <= self.test_end:
            return "test"
        return "train"


def assign_splits(n_units: int, scheme: SplitScheme = SplitScheme()) -> list[str]:
    """Split label of each of ``n_units`` aligned units, in order. Depends only on the position,
    so every language holds out the same units."""
    return [scheme.split_of(i) for i in range(n_units)]
