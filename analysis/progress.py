"""Progress reporting and cancellation, shared by the CLI and the QGIS algorithms."""

from __future__ import annotations

from typing import Callable, Optional

from .errors import Cancelled

__all__ = ["Progress"]


class Progress:
    """Reports progress through callbacks and stops the run when asked.

    Parameters
    ----------
    report : callable(fraction, message), optional
        Called with a fraction from 0 to 1 and a short message for a person.
    is_canceled : callable() -> bool, optional
        Asked between steps; when it answers True the run raises :class:`Cancelled`.
    """

    def __init__(
        self,
        report: Optional[Callable[[float, str], None]] = None,
        is_canceled: Optional[Callable[[], bool]] = None,
    ) -> None:
        self._report = report
        self._is_canceled = is_canceled

    def step(self, fraction: float, message: str) -> None:
        """Check for cancellation, then report ``fraction`` done with ``message``."""
        self.check_canceled()
        if self._report is not None:
            self._report(min(max(float(fraction), 0.0), 1.0), message)

    def sub(self, start: float, end: float) -> Progress:
        """The progress of one part of the run, which spans ``start``..``end`` of this one.

        The part reports its own 0 to 1; it is cancelled through the same question. A review
        gives each check such a part, in order, so its bar only goes forward.
        """
        if not 0.0 <= start <= end <= 1.0:
            raise ValueError(f"a part of the progress must lie within 0..1, not {start}..{end}")
        parent = self._report
        report: Optional[Callable[[float, str], None]] = None
        if parent is not None:

            def report_part(fraction: float, message: str) -> None:
                parent(start + (end - start) * fraction, message)

            report = report_part
        return Progress(report, self._is_canceled)

    def check_canceled(self) -> None:
        if self._is_canceled is not None and self._is_canceled():
            raise Cancelled("the review was cancelled; nothing was written")


SILENT = Progress()
