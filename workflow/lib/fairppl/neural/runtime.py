"""Where and how the training runs: the device, deterministic kernels, the CPU thread count."""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

import torch

from ..core.errors import InputError


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` -> CUDA if ``torch.cuda.is_available()`` else CPU; otherwise as given."""
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise InputError(f"unknown device {device!r} ({err}); expected 'auto', 'cpu' or "
                         f"'cuda[:N]'") from None


@contextlib.contextmanager
def deterministic_kernels(device: torch.device) -> Iterator[None]:
    """Deterministic kernels for the duration. On CUDA also the math attention kernel: in
    float32 PyTorch would pick the memory-efficient one, whose backward is not deterministic."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    was_on = torch.are_deterministic_algorithms_enabled()
    was_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        if device.type == "cuda":
            from torch.nn.attention import SDPBackend, sdpa_kernel
            with sdpa_kernel(SDPBackend.MATH):
                yield
        else:
            yield
    finally:
        torch.use_deterministic_algorithms(was_on, warn_only=was_warn)


@contextlib.contextmanager
def num_threads(threads: int | None) -> Iterator[None]:
    """Run the block with ``threads`` torch CPU threads (None: unchanged), the count restored
    after."""
    if threads is None:
        yield
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"threads must be a positive integer, got {threads!r}")
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
