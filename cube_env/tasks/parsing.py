"""The strict reply forms of the question tests (Cube Bench §3, B.1-B.8).

Each form implements :class:`~cubebench.tasks.items.ReplyForm`: ``parse`` reads a reply that is
exactly in the format and raises :class:`~cubebench.tasks.items.ParseFailure` for anything else
(prose, reasoning before the answer, code fences, a second answer, extra lines); ``format``
writes the canonical reply that ``parse`` reads back; ``sample`` draws a uniform allowed answer.

The only normalisation is the paper's: the whole reply is stripped of surrounding whitespace and
case-folded.  Structured replies must be ASCII (the paper's phrase "I don't know" may use a
typographic apostrophe), which also keeps Unicode case mappings (``ı`` -> ``I``, the Kelvin sign
-> ``K``) from turning a foreign reply into a valid one.  Replies longer than :data:`MAX_REPLY`
characters fail before any pattern is run; the patterns have no nested quantifiers, so matching
is linear in the (capped) length.
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass

from .items import ParseFailure

__all__ = ["MAX_REPLY", "MAX_REASONED_REPLY", "IDK", "OPTION_LETTERS", "LetterForm", "YesNoForm", "GridForm", "LabelsForm", "FreeTextForm",
           "BoxedForm", "TaggedForm", "ConfidenceForm", "read_choice"]

MAX_REPLY = 2000
"""Longest reply a strict form reads; a longer one is a parse failure without further work."""
OPTION_LETTERS = "ABCD"
"""The option letters of a four-choice item, in slot order (every paper's tests letter their options so)."""
IDK = "IDK"
"""The abstention answer (B.6)."""
QUOTE = 60
"""Characters of a reply quoted in a parse-failure message."""

_SP = r"[ \t]*"
_TAG = re.compile(rf"<ANSWER>{_SP}([A-Z]+){_SP}</ANSWER>")
_COLON = re.compile(rf"ANSWER{_SP}:{_SP}([A-Z]+)")
_YES_NO = re.compile(rf"ANSWER:{_SP}(YES|NO)\.?")
_ROW = re.compile(r"[ \t]*([A-Z])[ \t]+([A-Z])[ \t]+([A-Z])[ \t]*")
_IDK_PHRASES = ("I DON'T KNOW", "I DON'T KNOW.")


def _quote(reply: str) -> str:
    """A short, printable quotation of a reply (``repr`` escapes NULs and lone surrogates)."""
    if len(reply) <= QUOTE:
        return repr(reply)
    return f"{reply[:QUOTE]!r}... ({len(reply)} characters)"


def _fail(expected: str, reply: object) -> ParseFailure:
    got = _quote(reply) if isinstance(reply, str) else f"a {type(reply).__name__}, not text"
    return ParseFailure(f"expected {expected}; got {got}")


def _text(reply: object, expected: str) -> str:
    """The stripped reply, upper-cased; a failure for non-text, over-long, empty or non-ASCII replies."""
    if not isinstance(reply, str) or len(reply) > MAX_REPLY:
        raise _fail(expected, reply)
    if not reply.isascii():
        raise _fail(expected, reply)
    text = reply.strip(" \t\r\n")
    if not text:
        raise _fail(expected, reply)
    return text.upper()


def _check_letters(letters: str) -> None:
    if not letters or len(set(letters)) != len(letters) or not (letters.isascii() and letters.isalpha()
                                                                 and letters.isupper()):
        raise ValueError(f"letters must be distinct upper-case ASCII letters, got {letters!r}")


def _lines(text: str) -> list[str]:
    """The lines of a stripped reply (``\\n`` or ``\\r\\n`` endings)."""
    return text.replace("\r\n", "\n").split("\n")


@dataclass(frozen=True)
class LetterForm:
    """One option letter, in any of ``styles``: ``bare`` (``B``), ``tag`` (``<ANSWER> B </ANSWER>``) or
    ``colon`` (``ANSWER: B``); case-insensitive, one line.  With ``idk`` the abstention answer
    :data:`IDK` is allowed too (B.6): ``IDK`` or the fifth letter (``E`` after ``ABCD``) in any style,
    or the whole reply "I don't know" (optional final period)."""

    letters: str = "ABCD"
    styles: tuple[str, ...] = ("bare", "tag")
    idk: bool = False

    STYLES = ("bare", "tag", "colon")

    def __post_init__(self) -> None:
        _check_letters(self.letters)
        if not self.styles or any(s not in self.STYLES for s in self.styles):
            raise ValueError(f"styles must be a non-empty choice from {self.STYLES}, got {self.styles!r}")
        if self.idk and not ("A" <= self.idk_letter <= "Z" and self.idk_letter not in self.letters):
            raise ValueError(f"no letter follows {self.letters!r} to stand for IDK")

    @property
    def idk_letter(self) -> str:
        """The letter that also means IDK: the one after the last option letter."""
        return chr(ord(self.letters[-1]) + 1)

    @property
    def answers(self) -> tuple[str, ...]:
        return tuple(self.letters) + ((IDK,) if self.idk else ())

    @property
    def expected(self) -> str:
        shown = {"bare": "X", "tag": "<ANSWER> X </ANSWER>", "colon": "ANSWER: X"}
        idk = f", IDK, {self.idk_letter} or \"I don't know\"" if self.idk else ""
        return f"one line, {' or '.join(shown[s] for s in self.styles)}, with X one of {'/'.join(self.letters)}{idk}"

    def parse(self, reply: str) -> str:
        if self.idk and isinstance(reply, str) and len(reply) <= MAX_REPLY:
            phrase = reply.strip(" \t\r\n").replace("\u2019", "'")
            if phrase.isascii() and phrase.upper() in _IDK_PHRASES:
                return IDK
        text = _text(reply, self.expected)
        for style in self.styles:
            token = self._token(style, text)
            if token is not None and len(token) == 1 and token in self.letters:
                return token
            if token is not None and self.idk and token in (IDK, self.idk_letter):
                return IDK
        raise _fail(self.expected, reply)

    @staticmethod
    def _token(style: str, text: str) -> str | None:
        if style == "bare":
            return text
        match = (_TAG if style == "tag" else _COLON).fullmatch(text)
        return match.group(1) if match else None

    def format(self, answer: str) -> str:
        if answer not in self.answers:
            raise ValueError(f"{answer!r} is not one of {self.answers}")
        return {"bare": "{}", "tag": "<ANSWER> {} </ANSWER>", "colon": "ANSWER: {}"}[self.styles[0]].format(answer)

    def sample(self, rng: random.Random) -> str:
        return rng.choice(self.answers)


@dataclass(frozen=True)
class YesNoForm:
    """``Answer: Yes`` or ``Answer: No`` (B.2): case-insensitive, optional spaces after the colon and
    an optional final period; the answer is ``"Yes"`` or ``"No"``."""

    expected = "exactly 'Answer: Yes' or 'Answer: No'"

    def parse(self, reply: str) -> str:
        match = _YES_NO.fullmatch(_text(reply, self.expected))
        if match is None:
            raise _fail(self.expected, reply)
        return match.group(1).capitalize()

    def format(self, answer: str) -> str:
        if answer not in ("Yes", "No"):
            raise ValueError(f"{answer!r} is not 'Yes' or 'No'")
        return f"Answer: {answer}"

    def sample(self, rng: random.Random) -> str:
        return rng.choice(("Yes", "No"))


@dataclass(frozen=True)
class GridForm:
    """A 3x3 face (B.1): exactly three lines of three letters from ``alphabet`` separated by spaces
    (``G W R``), case-insensitive; no blank line between rows.  The answer is the 9 upper-case letters
    row-major."""

    alphabet: str = "WYROGB"

    def __post_init__(self) -> None:
        _check_letters(self.alphabet)

    @property
    def expected(self) -> str:
        return f"three lines of three letters from {'/'.join(self.alphabet)} separated by spaces, e.g. 'G W R'"

    def parse(self, reply: str) -> tuple[str, ...]:
        rows = _lines(_text(reply, self.expected))
        matches = [_ROW.fullmatch(row) for row in rows] if len(rows) == 3 else []
        cells = tuple(c for m in matches if m is not None for c in m.groups())
        if len(cells) != 9 or any(c not in self.alphabet for c in cells):
            raise _fail(self.expected, reply)
        return cells

    def format(self, answer: tuple[str, ...]) -> str:
        if len(answer) != 9 or not set(answer) <= set(self.alphabet):
            raise ValueError(f"{answer!r} is not 9 letters from {self.alphabet!r}")
        return "\n".join(" ".join(answer[r:r + 3]) for r in range(0, 9, 3))

    def sample(self, rng: random.Random) -> tuple[str, ...]:
        return tuple(rng.choice(self.alphabet) for _ in range(9))


@dataclass(frozen=True)
class LabelsForm:
    """One label per option letter (B.7): exactly one line per letter, in order, ``<A> DECREASE </A>``
    with the line's own letter in both tags; case-insensitive, spaces allowed inside the tags, and a
    label's ``_`` may be written as one space or left out (``NO CHANGE``, ``NOCHANGE``).  Any wrong line
    fails the whole reply.  The answer is the tuple of labels in letter order."""

    letters: str = "ABCD"
    labels: tuple[str, ...] = ("DECREASE", "NO_CHANGE", "INCREASE")

    def __post_init__(self) -> None:
        _check_letters(self.letters)
        spellings = [{label, label.replace("_", " "), label.replace("_", "")} for label in self.labels]
        if not self.labels or len(set().union(*spellings)) != sum(map(len, spellings)) or not all(
                label.isascii() and label.replace("_", "").isalpha() and label.isupper() for label in self.labels):
            raise ValueError(f"labels must be distinct upper-case ASCII words (A-Z, _) whose spellings without "
                             f"'_' differ too, got {self.labels!r}")

    def _aliases(self) -> dict[str, str]:
        return {alias: label for label in self.labels
                for alias in (label, label.replace("_", " "), label.replace("_", ""))}

    @property
    def expected(self) -> str:
        return (f"{len(self.letters)} lines, one per option {'/'.join(self.letters)} in order, each like "
                f"'<{self.letters[0]}> {self.labels[0]} </{self.letters[0]}>' with a label from {'/'.join(self.labels)}")

    def parse(self, reply: str) -> tuple[str, ...]:
        rows = _lines(_text(reply, self.expected))
        if len(rows) != len(self.letters):
            raise _fail(self.expected, reply)
        aliases = self._aliases()
        labels = []
        for letter, row in zip(self.letters, rows):
            row = row.strip(" \t")
            open_, close = f"<{letter}>", f"</{letter}>"
            inner = row[len(open_):-len(close)].strip(" \t") if row.startswith(open_) and row.endswith(close) else ""
            if inner not in aliases:
                raise _fail(self.expected, reply)
            labels.append(aliases[inner])
        return tuple(labels)

    def format(self, answer: tuple[str, ...]) -> str:
        if len(answer) != len(self.letters) or any(a not in self.labels for a in answer):
            raise ValueError(f"{answer!r} is not {len(self.letters)} labels from {self.labels}")
        return "\n".join(f"<{letter}> {label} </{letter}>" for letter, label in zip(self.letters, answer))

    def sample(self, rng: random.Random) -> tuple[str, ...]:
        return tuple(rng.choice(self.labels) for _ in self.letters)


@dataclass(frozen=True)
class FreeTextForm:
    """An unscored free-text turn (the reflection itself): any reply is accepted, stripped and cut to
    ``max_chars``; lone surrogates become ``?`` so the text can be sent on in a later prompt."""

    max_chars: int = 4000

    def parse(self, reply: str) -> str:
        text = (reply if isinstance(reply, str) else "").strip()[:self.max_chars]
        return text.encode("utf-8", "replace").decode("utf-8")

    def format(self, answer: str) -> str:
        return answer

    def sample(self, rng: random.Random) -> str:
        return ""


# --- reasoned replies: reasoning first, then the final answer in a marked form --------------------------------
MAX_REASONED_REPLY = 64_000
"""Longest reasoned reply read (about 16k tokens); a longer one is a parse failure without further work."""
MAX_MARKED = 200
"""Longest content of one marked answer (a box or a tag) that is read."""
MAX_CHOICE_TEXT = 1000
"""Longest text :func:`read_choice` reads (a box, a tag, a reply's last line); longer names no answer."""

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
"""Zero-width characters, the word joiner, the BOM and the soft hyphen: removed before reading."""
_LATEX_WRAP = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mathit|operatorname|mbox)\s*\{([^{}]*)\}")
_DECOR = str.maketrans("", "", "*_`$\"'\u201c\u201d\u2018\u2019#")
_PREFIX = re.compile(r"^(?:(?:the\s+)?(?:final\s+)?(?:answer|choice|option)\s*(?:is\s*)?[:=]?\s*)", re.IGNORECASE)
_CHOICE = re.compile(r"^[(\[]?\s*([A-Za-z]+)\s*(?:[)\]]\s*)?(?:[.:),;!\-\u2013\u2014](.*))?$", re.DOTALL)
"""One answer token, optionally bracketed, optionally followed by a separator and any text; no two ``\\s*`` meet,
so a failing match backtracks in linear time."""
_IDK_PHRASE = re.compile(r"^i\s+don'?t\s+know\.?$", re.IGNORECASE)
_TAG_ANSWER = re.compile(r"<\s*ANSWER\s*>([^<>\n]{0,200}?)<\s*/\s*ANSWER\s*>", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{")


def _reasoned_text(reply: object, expected: str) -> str:
    """A reasoned reply made comparable: NFKC (full-width colons, brackets and letters become ASCII), ``\\r\\n`` as
    ``\\n``, invisible characters removed; a failure for non-text, empty or over-long replies."""
    if not isinstance(reply, str) or not reply.strip() or len(reply) > MAX_REASONED_REPLY:
        raise _fail(expected, reply)
    return unicodedata.normalize("NFKC", reply.replace("\r\n", "\n")).translate(_INVISIBLE)


def read_choice(content: str, answers: tuple[str, ...], idk_letter: str | None = None) -> str | None:
    """The one answer of ``answers`` that a marked answer's content names, else ``None``.

    Markdown and LaTeX wrappers (``**B**``, ``\\text{Yes}``, ``$B$``), quotes, an ``Answer:``/``Option`` prefix,
    brackets (``(B)``) and text after a separator (``B: R2``, ``No, it cannot``) are allowed; the answer itself is
    matched case-insensitively and must be ASCII.  ``Yes/No``, ``A or B``, ``X`` (the placeholder) name none."""
    if len(content) > MAX_CHOICE_TEXT:
        return None
    text = content
    for _ in range(3):
        text = _LATEX_WRAP.sub(r"\1", text)
    text = _PREFIX.sub("", text.translate(_DECOR).strip()).strip()
    if IDK in answers and _IDK_PHRASE.match(text.replace("\u2019", "'")):
        return IDK
    match = _CHOICE.match(text)
    if match is None or not match.group(1).isascii():
        return None
    by_name = {a.upper(): a for a in answers} | ({idk_letter: IDK} if idk_letter and IDK in answers else {})
    token, rest = match.group(1).upper(), (match.group(2) or "").split()
    if rest and rest[0].strip(".,;:!()").upper() in by_name:  # "A, B", "Yes, no": two answers, not one
        return None
    return by_name.get(token)


def _boxes(text: str) -> list[str]:
    """The contents of every ``\\boxed{...}`` (nested braces balanced; one not closed within ``MAX_MARKED``
    characters is passed over)."""
    found = []
    for match in _BOXED.finditer(text):
        start = end = match.end()
        limit, depth = start + MAX_MARKED + 1, 1
        while depth:
            close = text.find("}", end, limit)
            if close < 0:
                break
            depth += text.count("{", end, close) - 1
            end = close + 1
        if depth == 0:
            found.append(text[start:end - 1])
    return found


def _vocabulary(inner: LetterForm | YesNoForm) -> tuple[tuple[str, ...], str | None]:
    if isinstance(inner, LetterForm):
        return inner.answers, inner.idk_letter if inner.idk else None
    return ("Yes", "No"), None


def _tail(reply: str) -> str:
    """The end of a reply, quoted for a parse-failure message (a reasoned reply's answer is at its end)."""
    return repr(reply) if len(reply) <= QUOTE else f"...{reply[-QUOTE:]!r} ({len(reply)} characters)"


def _final_answer(answers: list[str], expected: str, reply: str) -> str:
    """The one answer of a reply's marked answers; none, or two different ones, is a parse failure."""
    if not answers:
        raise ParseFailure(f"expected {expected}; no final answer found in {_tail(reply)}")
    if len(set(answers)) > 1:
        raise ParseFailure(f"expected {expected}; the reply gives {len(set(answers))} different final answers "
                           f"({', '.join(dict.fromkeys(answers))}) in {_tail(reply)}")
    return answers[-1]


@dataclass(frozen=True)
class BoxedForm:
    """STARE's answer form (App. G.1): reason step by step, then the final answer in ``\\boxed{}``.

    The answer is the last box; every box that names an answer of ``inner`` (a :class:`LetterForm` or
    :class:`YesNoForm`, whose answers it reads: ``\\boxed{ Yes }``, ``\\boxed{\\text{B}}``) must name the same one,
    so a reply that boxes two different answers (a hedge, or an answer and then a corrected one) is a parse
    failure, as is a reply with no box.  Boxes that name none (``\\boxed{}`` echoing the instruction,
    ``\\boxed{Yes/No}``) are passed over.  Prose after the last box does not change the answer."""

    inner: LetterForm | YesNoForm

    @property
    def answers(self) -> tuple[str, ...]:
        return _vocabulary(self.inner)[0]

    @property
    def expected(self) -> str:
        return f"reasoning, then the final answer in \\boxed{{}} ({' or '.join(self.answers)})"

    def parse(self, reply: str) -> str:
        text = _reasoned_text(reply, self.expected)
        answers, idk = _vocabulary(self.inner)
        named = [read_choice(box, answers, idk) for box in _boxes(text)]
        return _final_answer([a for a in named if a is not None], self.expected, text)

    def format(self, answer: str) -> str:
        if answer not in self.answers:
            raise ValueError(f"{answer!r} is not one of {self.answers}")
        return f"\\boxed{{{answer}}}"

    def sample(self, rng: random.Random) -> str:
        return self.inner.sample(rng)


@dataclass(frozen=True)
class TaggedForm:
    """Reasoning, then the tagged choice (Cube Bench's code release, Inf-Bench's "the letter and why"): the answer
    is in ``<ANSWER> X </ANSWER>`` tags, or on the reply's last non-empty line read leniently (``B``,
    ``Answer: B``, ``**Final answer: B**``, ``I don't know`` where ``inner`` allows IDK); a one-line reply in
    ``inner``'s strict form is therefore read too.  Every tag and the last line that name an answer must
    name the same one: none, or two different ones, is a parse failure."""

    inner: LetterForm

    @property
    def answers(self) -> tuple[str, ...]:
        return self.inner.answers

    @property
    def expected(self) -> str:
        idk = " (or IDK)" if self.inner.idk else ""
        return f"reasoning, then the choice as <ANSWER> X </ANSWER> with X one of {'/'.join(self.inner.letters)}{idk}"

    def parse(self, reply: str) -> str:
        text = _reasoned_text(reply, self.expected)
        answers, idk = _vocabulary(self.inner)
        named = [read_choice(m.group(1), answers, idk) for m in _TAG_ANSWER.finditer(text)]
        lines = [line for line in text.split("\n") if line.strip()]
        if lines and not _TAG_ANSWER.search(lines[-1]):
            named.append(read_choice(lines[-1].strip(" \t>-"), answers, idk))
        return _final_answer([a for a in named if a is not None], self.expected, text)

    def format(self, answer: str) -> str:
        if answer not in self.answers:
            raise ValueError(f"{answer!r} is not one of {self.answers}")
        return f"<ANSWER> {answer} </ANSWER>"

    def sample(self, rng: random.Random) -> str:
        return self.inner.sample(rng)


_CONFIDENCE = re.compile(rf"<ANSWER>{_SP}([A-Z]+){_SP}</ANSWER>{_SP}<CONFIDENCE>{_SP}(0|1|0?\.[0-9]{{1,3}}|1\.0{{1,3}})"
                         rf"{_SP}</CONFIDENCE>")
CONFIDENCE_STEPS = tuple(k / 10 for k in range(11))
"""The confidences a random answer draws from (0.0, 0.1, ..., 1.0)."""


@dataclass(frozen=True)
class ConfidenceForm:
    """A choice and the answerer's confidence in it (Cube Bench B.6.2's optional confidence gate): one line
    ``<ANSWER> X </ANSWER> <CONFIDENCE> 0.8 </CONFIDENCE>``, X one of ``inner``'s answers (IDK or its letter where
    ``inner`` allows it), the confidence a number from 0 to 1 with at most three decimals.  With ``reasoned``
    (Cube Bench's code-release rules) reasoning may come first: the last non-empty line is read.  The answer is
    the pair ``(choice, confidence)``."""

    inner: LetterForm
    reasoned: bool = False

    @property
    def expected(self) -> str:
        idk = f" (or IDK/{self.inner.idk_letter})" if self.inner.idk else ""
        first = "reasoning, then on the last line " if self.reasoned else "one line, "
        return (f"{first}<ANSWER> X </ANSWER> <CONFIDENCE> P </CONFIDENCE> with X one of "
                f"{'/'.join(self.inner.letters)}{idk} and P a number from 0 to 1")

    def parse(self, reply: str) -> tuple[str, float]:
        if self.reasoned and isinstance(reply, str) and len(reply) <= MAX_REASONED_REPLY:
            lines = [line for line in _reasoned_text(reply, self.expected).split("\n") if line.strip()]
            reply = lines[-1] if lines else ""
        match = _CONFIDENCE.fullmatch(_text(reply, self.expected))
        if match is None:
            raise _fail(self.expected, reply)
        choice = match.group(1)
        if choice in self.inner.letters and len(choice) == 1:
            return choice, float(match.group(2))
        if self.inner.idk and choice in (IDK, self.inner.idk_letter):
            return IDK, float(match.group(2))
        raise _fail(self.expected, reply)

    def format(self, answer: tuple[str, float]) -> str:
        choice, confidence = answer
        if choice not in self.inner.answers or not 0 <= confidence <= 1:
            raise ValueError(f"{answer!r} is not a choice of {self.inner.answers} with a confidence in [0, 1]")
        return f"<ANSWER> {choice} </ANSWER> <CONFIDENCE> {confidence:.2f} </CONFIDENCE>"

    def sample(self, rng: random.Random) -> tuple[str, float]:
        return self.inner.sample(rng), rng.choice(CONFIDENCE_STEPS)
