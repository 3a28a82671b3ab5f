"""The comment letter's model and its words: what :mod:`analysis.report.letter` builds and each of
its forms (the HTML and PDF template, :mod:`analysis.report.letter_docx`) shows, kept apart so the
Word writer does not import the builder that calls it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

STILL_OPEN, WAS_RESOLVED = "still open", "resolved"
# The letter's own words, written once for each of its forms (HTML, PDF, DOCX).
LABELS = {
    "chapter": "Chapter:",
    "measured": "measured:",
    "accepted": "accepted by the reviewer as stated",
    "request": "To satisfy this comment:",
    "earlier": "Comments of round {previous}",
    "comments": "Comments",
    "closing": "Sincerely,",
    "signature_blank": "______________________________",
    "illustrative": (
        "illustrative letterhead: the rules profile's [letter] values are examples, not the Village's"
    ),
    "heading": "Stormwater Pollution Prevention Plan review, round {round} (reviewed {reviewed_on})",
    "footer": "Review file {review_file}, round {round}; plan sha256 {sha}.",
}


def intro(letter: Letter) -> str:
    """The letter's opening paragraph."""
    said = (
        f"The {letter.office} has reviewed the Stormwater Pollution Prevention Plan submitted for "
        "the project above against the Village's stormwater management and erosion and sediment "
        "control chapter. "
    )
    count = len(letter.comments)
    if not count:
        return said + "No comment remains open in this round."
    return said + (
        f"The plan cannot be approved as submitted. Please address the {count} comment"
        f"{'s' if count != 1 else ''} below and resubmit, with a response letter that answers each "
        "comment by its number."
    )


def earlier_status(e: Earlier) -> str:
    """What became of a comment of the round before, as the letter says it."""
    return f"still open: comment {e.now} below" if e.now else f"resolved ({e.how})"


def label(key: str, letter: Letter) -> str:
    """:data:`LABELS` ``key`` filled in for ``letter``."""
    return LABELS[key].format(
        previous=letter.previous,
        round=letter.round,
        reviewed_on=letter.reviewed_on,
        review_file=letter.review_file,
        sha=letter.plan_sha256[:16],
    )


@dataclass(frozen=True)
class Comment:
    number: int  # in this letter, 1 for the first
    finding: int  # the finding's number in its round
    rule: str
    topic: str
    status: str
    section: str
    figure: str  # the measured figure and its limit, '' where the finding has none
    message: str
    request: str  # what would satisfy it
    features: tuple[str, ...]
    decision: str = ""  # accept: the reviewer accepted it as it stands (still asked)


@dataclass(frozen=True)
class Earlier:
    """A comment of the round before and what became of it in this round."""

    number: int  # its number in that round's letter
    rule: str
    topic: str
    message: str
    status: str  # STILL_OPEN or WAS_RESOLVED
    now: Optional[int]  # still open: its comment number in this letter
    how: str  # why resolved: 'overridden by the reviewer', 'no longer found', ...


@dataclass(frozen=True)
class Letter:
    village: str
    address: tuple[str, ...]
    office: str
    signature_title: str
    illustrative: bool
    reviewer: str
    dated: str
    site: str
    project_address: str
    applicant: str
    review_file: str
    round: int
    reviewed_on: str
    plan_sha256: str
    comments: list[Comment]
    groups: list[tuple[str, list[Comment]]]
    previous: Optional[int]
    earlier: list[Earlier] = field(default_factory=list)
