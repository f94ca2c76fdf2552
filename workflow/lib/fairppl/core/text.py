"""Text normalisation and strict UTF-8 decoding, shared by every corpus reader."""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

from .errors import InputError

# Any run of Unicode whitespace (incl. NBSP, ideographic space, line/paragraph separators).
_WHITESPACE = re.compile(r"\s+", flags=re.UNICODE)
# Format and control characters that carry no text (zero-width space, BOM, C0/C1 controls),
# except ZWJ/ZWNJ (U+200C/U+200D), which are orthographic in Indic and Persian scripts.
_KEEP_FORMAT = {"\u200c", "\u200d"}


@functools.cache
def _invisible() -> re.Pattern:
    """A regex matching every control (Cc) or format (Cf) character except ZWJ/ZWNJ; built once,
    on first use (a scan of the code space, ~0.3 s)."""
    codes = [
        i for i in range(sys.maxunicode + 1)
        if unicodedata.category(chr(i)) in ("Cc", "Cf") and chr(i) not in _KEEP_FORMAT
        and not chr(i).isspace()
    ]
    ranges: list[list[int]] = []
    for i in codes:  # runs of consecutive code points as ranges: a short, fast character class
        if ranges and ranges[-1][1] == i - 1:
            ranges[-1][1] = i
        else:
            ranges.append([i, i])
    body = "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                   for a, b in ranges)
    return re.compile(f"[{body}]")


def normalize(text: str) -> str:
    """Normalise one unit of text: Unicode NFC, invisible control/format characters removed
    (ZWJ and ZWNJ kept: they are spelling in Devanagari, Bengali and Persian), every run of
    whitespace replaced by one ASCII space, no leading or trailing space.

    The result is what every model is charged for, character by character.
    """
    text = _invisible().sub("", unicodedata.normalize("NFC", text))
    return _WHITESPACE.sub(" ", text).strip()


def decode_utf8(data: bytes, path: str) -> str:
    """Decode bytes as strict UTF-8; on failure raise InputError naming the file, the line and
    the byte offset of the first invalid sequence."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(
            f"invalid UTF-8 at byte {err.start} ({data[err.start:err.start + 4]!r}): "
            f"expected UTF-8 encoded text",
            path=path, line=line,
        ) from None
